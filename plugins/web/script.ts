/**
 * The script every page carries, in the page itself (nothing is fetched for it). It only adds to what the
 * server sent, which reads the same without it:
 *
 * - **Sorting without a reload.** In a table marked `data-sortable`, each column heading becomes a button
 *   (reached with Tab, pressed with Enter or Space) that sorts the rows by that column, numbers as numbers;
 *   pressed again, the other way. The heading's `aria-sort` says how the rows are sorted.
 * - **Tooltips on charts.** Each chart point or bar has an SVG `<title>` (the browser's own tooltip, without
 *   the script); the script shows the same text beside the pointer at once, in the page's colours.
 *
 * Written as plain ES2020 a browser runs as it is: there is no build step for the site.
 */
export const SITE_SCRIPT = `(()=>{
const collator=new Intl.Collator('en',{numeric:true,sensitivity:'base'});
const number=(text)=>{const n=Number(text.replace(/[^0-9.-]/g,''));return text.trim()===''||Number.isNaN(n)?-Infinity:n;};
for(const table of document.querySelectorAll('table[data-sortable]')){
  const heads=[...table.tHead.rows[0].cells];
  const body=table.tBodies[0];
  heads.forEach((th,column)=>{
    const button=document.createElement('button');
    button.type='button';
    button.className='sort';
    button.append(...th.childNodes);
    th.append(button);
    button.addEventListener('click',()=>{
      const numeric=th.classList.contains('n');
      const now=th.getAttribute('aria-sort');
      const direction=now==='ascending'?'descending':now==='descending'?'ascending':numeric?'descending':'ascending';
      for(const other of heads)other.removeAttribute('aria-sort');
      th.setAttribute('aria-sort',direction);
      const sign=direction==='ascending'?1:-1;
      const rows=[...body.rows].map((row,index)=>{
        const cell=row.cells[column];
        const text=cell?(cell.dataset.sort??cell.textContent??''):'';
        return {row,index,key:numeric?number(text):text.trim()};
      });
      rows.sort((a,b)=>sign*(numeric?(a.key>b.key?1:a.key<b.key?-1:0):collator.compare(a.key,b.key))||a.index-b.index);
      body.append(...rows.map((entry)=>entry.row));
    });
  });
}
const tip=document.createElement('div');
tip.className='tip';
tip.hidden=true;
document.body.append(tip);
for(const title of document.querySelectorAll('svg.chart title')){
  const target=title.parentElement;
  target.dataset.tip=title.textContent;
  title.remove();
}
const place=(event)=>{
  const x=Math.min(event.clientX+14,innerWidth-tip.offsetWidth-4);
  const y=event.clientY+18+tip.offsetHeight>innerHeight?event.clientY-tip.offsetHeight-10:event.clientY+18;
  tip.style.left=Math.max(4,x)+'px';
  tip.style.top=Math.max(4,y)+'px';
};
document.addEventListener('pointerover',(event)=>{
  const target=event.target instanceof Element?event.target.closest('[data-tip]'):null;
  if(!target){tip.hidden=true;return;}
  tip.textContent=target.dataset.tip;
  tip.hidden=false;
  place(event);
});
document.addEventListener('pointermove',(event)=>{if(!tip.hidden)place(event);});
document.documentElement.addEventListener('pointerleave',()=>{tip.hidden=true;});
addEventListener('scroll',()=>{tip.hidden=true;},{passive:true});
})();`;
