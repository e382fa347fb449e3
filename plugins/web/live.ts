/**
 * The scripts that keep pages live, in the pages themselves (allowed by their hashes, like the frame's). Each
 * reads what it needs from the page's data attributes, so each is one text, hashed once:
 *
 * - **The status page** (`STATUS_SCRIPT`): its four counts and the "counted at" time from the event stream's
 *   `counts` events, and its chart taken anew from the page itself while the chart is behind them.
 * - **A channel page** (`CHANNEL_SCRIPT`): its users now, most today, record, modes and topic, read again from
 *   the channel's data after each event of the channel.
 * - **The Live page** (`LIVE_SCRIPT`): the network's public events as lines, newest first, with a pause and
 *   filters.
 *
 * Where the bot serves no stream (the events plugin is off), where the browser has no `EventSource`, or where
 * the stream is refused (too many open from one address, a proxy that does not pass it), the status and
 * channel pages ask their data every `live_seconds` instead, as the status page always did.
 *
 * Written as plain ES2020 a browser runs as it is: there is no build step for the site.
 */
import { inlineScriptSource } from '../../lib/sdk.js';

/** Where the events plugin streams the network's events (Server-Sent Events). */
export const EVENTS_PATH = '/api/irc/events/';

/**
 * `follow(query, on)`: the event stream with `query` (types, channel), each event of `on.types` to
 * `on.event(type, data, id)`, its state (connecting, open, reconnecting, hidden) to `on.state`.
 *
 * - A stream is held only while the page shows: a hidden tab closes it (a browser opens at most six
 *   connections to a host over HTTP/1.1, and the bot counts open streams per address), and it reopens with
 *   `since=` the last event's id, so that the bot replays what was missed.
 * - Opened with nothing to resume from (first, or before any event), the page may have missed a change between
 *   the moment it was made and the stream's opening: `on.resync()` reads the page's data once, and again once
 *   the answer's max-age has passed if no event came meanwhile (a cache may have given an answer made before
 *   the stream opened). A `gap` (events dropped before they could be replayed) reads it again too, unless the
 *   page has its own `on.gap`.
 * - Refused for good (EventSource says nothing of why), the same request is asked once more to read its status
 *   and message, for `on.refused({status, message, retry})`.
 */
const FOLLOW = `
const follow=(initial,on)=>{
  let query=initial;
  let source=null;
  let last=null;
  let stopped=false;
  let second=null;
  const heard={count:0};
  const resync=async(first)=>{
    if(!on.resync)return;
    const before=heard.count;
    let maxAge=null;
    try{maxAge=await on.resync();}catch{}
    if(first&&maxAge>0){
      clearTimeout(second);
      second=setTimeout(()=>{if(source&&heard.count===before)resync(false);},(maxAge+1)*1000);
    }
  };
  const probe=async(url)=>{
    const controller=new AbortController();
    try{
      const answer=await fetch(url,{signal:controller.signal,cache:'no-store'});
      let message='';
      if(answer.status!==200){try{message=String((await answer.json()).error.message||'');}catch{}}
      controller.abort();
      return {status:answer.status,message,retry:Number(answer.headers.get('Retry-After'))||0};
    }catch{return {status:0,message:'',retry:0};}
  };
  const close=()=>{if(source){source.close();source=null;}clearTimeout(second);};
  const open=()=>{
    if(stopped||source||document.hidden)return;
    const params=new URLSearchParams(query);
    if(last)params.set('since',last);
    const url='${EVENTS_PATH}?'+params.toString();
    const here=new EventSource(url);
    source=here;
    on.state('connecting');
    here.onopen=()=>{
      if(source!==here)return;
      on.state('open');
      if(!last)resync(true);
    };
    here.onerror=async()=>{
      if(source!==here)return;
      if(here.readyState!==EventSource.CLOSED){on.state('reconnecting');return;}
      source=null;
      stopped=true;
      const why=await probe(url);
      on.refused(why);
    };
    const listen=(type,handle)=>here.addEventListener(type,(event)=>{
      if(source!==here)return;
      let data;
      try{data=JSON.parse(event.data);}catch{return;}
      if(event.lastEventId)last=event.lastEventId;
      handle(data,event.lastEventId);
    });
    for(const type of on.types)listen(type,(data,id)=>{heard.count++;on.event(type,data,id);});
    listen('gap',(data)=>{if(on.gap)on.gap(data);else resync(true);});
    listen('end',(data)=>{if(on.end)on.end(data);});
  };
  document.addEventListener('visibilitychange',()=>{
    if(!document.hidden){open();return;}
    if(source){close();on.state('hidden');}
  });
  open();
  return {
    restart(next){close();query=next;last=null;stopped=false;open();},
  };
};
const flash=(element)=>{element.classList.remove('fresh');void element.offsetWidth;element.classList.add('fresh');};
const maxAgeOf=(answer)=>Number(((answer.headers.get('Cache-Control')||'').split('max-age=')[1]||'').split(',')[0])||0;
const timeFormat=(timeZone)=>new Intl.DateTimeFormat('sv-SE',{timeZone,year:'numeric',month:'2-digit',day:'2-digit',hour:'2-digit',minute:'2-digit',hour12:false});
`;

/**
 * The status page. Its counts come from `counts` events (written in order with the reads of its data: a read
 * answered after a later event does not undo it). The chart's latest point is a bucket's peak from the history,
 * which takes a point every `history_seconds`, later than the counts: while the last counts are above the
 * chart's latest bucket, or in a later bucket, the chart is taken anew from the page every `live_seconds` (for
 * ten minutes at most after the last counts). Without a stream: the status data every `live_seconds`, with its
 * ETag, and the chart anew when its latest history point changed.
 */
const STATUS = `
const cards=document.querySelector('dl[data-live-seconds]');
if(!cards)return;
const seconds=Number(cards.dataset.liveSeconds)||15;
const fields=[...cards.querySelectorAll('[data-live]')];
const time=document.querySelector('[data-live-time]');
const how=document.querySelector('[data-live-how]');
const chart=document.querySelector('[data-live-chart]');
const format=timeFormat(cards.dataset.timeZone);
let asked=0;
let shown=0;
const write=(numbers,at,order)=>{
  if(order<shown||!numbers)return;
  shown=order;
  for(const card of fields){
    const value=numbers[card.dataset.live];
    if(typeof value!=='number')continue;
    const text=value.toLocaleString('en-US');
    if(card.textContent!==text){card.textContent=text;flash(card);}
  }
  if(time&&at){time.setAttribute('data-synced-at',at);time.textContent=format.format(new Date(at));}
};
const redraw=async()=>{
  const answer=await fetch(location.pathname+location.search);
  if(answer.status!==200||!chart)return;
  const fresh=new DOMParser().parseFromString(await answer.text(),'text/html').querySelector('[data-live-chart]');
  if(!fresh)return;
  const opened=chart.querySelector('details')?.open;
  for(const title of fresh.querySelectorAll('svg.chart title')){title.parentElement.dataset.tip=title.textContent;title.remove();}
  chart.replaceChildren(...fresh.childNodes);
  const details=chart.querySelector('details');
  if(opened&&details)details.open=true;
  for(const name of ['bucketMs','latestTime','latestUsers','latestChannels']){
    if(name in fresh.dataset)chart.dataset[name]=fresh.dataset[name];else delete chart.dataset[name];
  }
};
const latest={counts:null,until:0,timer:null};
const behind=()=>{
  const counts=latest.counts;
  if(!chart||!counts)return false;
  const at=Date.parse(chart.dataset.latestTime||'');
  if(Number.isNaN(at))return true;
  const bucket=Number(chart.dataset.bucketMs)||3600000;
  return Math.floor(Date.parse(counts.time)/bucket)*bucket>at||
    counts.users>Number(chart.dataset.latestUsers)||counts.channels>Number(chart.dataset.latestChannels);
};
const chase=()=>{
  if(latest.timer||Date.now()>latest.until||!behind())return;
  latest.timer=setTimeout(async()=>{try{await redraw();}catch{}latest.timer=null;chase();},seconds*1000);
};
const counted=(counts)=>{latest.counts=counts;latest.until=Date.now()+600000;chase();};
let tag=null;
let point=null;
const tick=async()=>{
  try{
    const order=++asked;
    const answer=await fetch('/network/data/status/',{headers:tag?{'If-None-Match':tag}:{}});
    if(answer.status!==200)return;
    tag=answer.headers.get('ETag');
    const body=await answer.json();
    write(body.snapshot,body.snapshot.synced_at,order);
    const newest=JSON.stringify((body.history||[]).at(-1)??null);
    if(point!==null&&newest!==point)await redraw();
    point=newest;
  }catch{}
};
const poll=()=>{
  if(how)how.textContent='updated live every '+seconds+' s';
  tick();
  setInterval(tick,seconds*1000);
};
const resync=async()=>{
  const order=++asked;
  const answer=await fetch('/network/data/status/',{cache:'no-cache'});
  if(answer.status!==200)return null;
  const body=await answer.json();
  const snapshot=body.snapshot;
  write(snapshot,snapshot.synced_at,order);
  if(order===shown)counted({time:snapshot.synced_at,users:snapshot.users,channels:snapshot.channels});
  return maxAgeOf(answer);
};
if(!cards.hasAttribute('data-stream')||typeof EventSource!=='function'){poll();return;}
follow({types:'counts'},{
  types:['counts'],
  state(){},
  event(type,counts){write(counts,counts.time,++asked);counted(counts);},
  resync,
  refused:poll,
});
`;

/**
 * A channel page. Each event of the channel (join, part, kick, quit, topic, mode) has its data read again
 * rather than the count changed in the page: the answer is the channel as the bot holds it, with its peak and
 * record too, and a count kept in the page would drift with any event it missed. The read names the last event
 * (`?after=<id>`), a URL of its own: no cache on the way can answer it with what it kept from before the event,
 * and every reader of the channel asks the same URL after the same event. Reads are one at a time, a second
 * apart at most, the last event asked for. The page of a channel the bot does not sit in hears no event of it
 * (the server says so: no `data-stream`) and asks its data every `live_seconds`, as without a stream.
 */
const CHANNEL = `
const cards=document.querySelector('dl[data-channel]');
if(!cards)return;
const seconds=Number(cards.dataset.liveSeconds)||15;
const path='/network/data/channel/'+encodeURIComponent(cards.dataset.channel)+'/';
const users=cards.querySelector('[data-live="users"]');
const peak=cards.querySelector('[data-live="peak_users"]');
const record=cards.querySelector('[data-record]');
const recordAt=cards.querySelector('[data-record] + dd time');
const modes=cards.querySelector('[data-live="modes"]');
const topic=document.querySelector('[data-live-topic]');
const format=timeFormat(cards.dataset.timeZone);
const number=(value)=>typeof value==='number'?value.toLocaleString('en-US'):'–';
const set=(element,text)=>{if(element&&element.textContent!==text){element.textContent=text;flash(element);}};
let asked=0;
let shown=0;
const write=(answer,order)=>{
  if(order<shown)return;
  shown=order;
  const channel=answer.channel||{};
  set(users,number(channel.users));
  set(peak,'Most today '+number(channel.peak_users));
  set(record,number(channel.record_users));
  if(recordAt&&typeof channel.record_users_at==='string'&&recordAt.dateTime!==channel.record_users_at){
    recordAt.dateTime=channel.record_users_at;
    recordAt.textContent=format.format(new Date(channel.record_users_at));
  }
  set(modes,typeof channel.modes==='string'?channel.modes:'–');
  if(!topic)return;
  const text=typeof channel.topic==='string'?channel.topic:'';
  if((topic.querySelector('.muted')?'':topic.textContent)===text)return;
  if(text)topic.textContent=text;
  else{const none=document.createElement('span');none.className='muted';none.textContent='No topic.';topic.replaceChildren(none);}
  flash(topic);
};
const read=async(url,options)=>{
  const order=++asked;
  const answer=await fetch(url,options);
  if(answer.status===200)write(await answer.json(),order);
  return answer;
};
let tag=null;
const tick=async()=>{
  try{
    const answer=await read(path,{headers:tag?{'If-None-Match':tag}:{}});
    if(answer.status===200)tag=answer.headers.get('ETag');
  }catch{}
};
const poll=()=>{tick();setInterval(tick,seconds*1000);};
if(!cards.hasAttribute('data-stream')||typeof EventSource!=='function'){poll();return;}
let wanted=null;
let busy=false;
let lastRead=0;
const next=async()=>{
  busy=true;
  const wait=lastRead+1000-Date.now();
  if(wait>0)await new Promise((done)=>setTimeout(done,wait));
  const after=wanted;
  wanted=null;
  lastRead=Date.now();
  try{await read(path+'?after='+encodeURIComponent(after),{});}catch{}
  busy=false;
  if(wanted!==null)next();
};
follow({types:'join,part,kick,quit,topic,mode',channel:cards.dataset.channel},{
  types:['join','part','kick','quit','topic','mode'],
  state(){},
  event(type,data,id){wanted=id||String(Date.now());if(!busy)next();},
  async resync(){return maxAgeOf(await read(path,{cache:'no-cache'}));},
  refused:poll,
});
`;

/**
 * The Live page: each event a line (its time in the site's zone, its kind, a sentence), newest first, at most
 * `data-limit` of them. Every name and text from the network is written as text (`textContent`, text nodes),
 * never as markup. Paused, new events are held (at most as many as the page shows; beyond that the oldest held
 * are dropped, and a line says how many) and shown when it resumes. The filters reopen the stream with their
 * `types=` and `channel=`, and the page's address follows them (a reload or a link keeps them). A stream the
 * bot refuses is told in the status line: not served (404) with a link to the API's endpoints; too many open
 * (429) or anything else, with its message, tried again after a while.
 */
const LIVE = `
const feed=document.querySelector('[data-live-feed]');
if(!feed||!feed.hasAttribute('data-stream'))return;
const form=feed.querySelector('form');
const bar=feed.querySelector('[data-live-bar]');
const state=feed.querySelector('[data-live-state]');
const pause=feed.querySelector('[data-live-pause]');
const heldText=feed.querySelector('[data-live-held]');
const lines=feed.querySelector('[data-live-lines]');
const limit=Number(lines.dataset.limit)||200;
const say=(...parts)=>state.replaceChildren(...parts);
bar.hidden=false;
if(typeof EventSource!=='function'){say('Not available in this browser: it cannot receive the event stream (it has no EventSource).');return;}
form.hidden=false;
pause.hidden=false;
const clock=new Intl.DateTimeFormat('en-GB',{timeZone:feed.dataset.timeZone,hour:'2-digit',minute:'2-digit',second:'2-digit',hourCycle:'h23'});
const span=(className,text)=>{const element=document.createElement('span');element.className=className;element.textContent=text;return element;};
const link=(path,name)=>{
  if(typeof name!=='string')return '?';
  const anchor=document.createElement('a');
  anchor.href=path+encodeURIComponent(name)+'/';
  anchor.textContent=name;
  return anchor;
};
const channel=(name)=>link('/network/channel/',name);
const nick=(name)=>link('/network/user/',name);
const plain=(value)=>typeof value==='string'?value:'?';
const number=(value)=>typeof value==='number'?value.toLocaleString('en-US'):'–';
const quoted=(text)=>typeof text==='string'&&text!==''?[': “',span('said',text),'”']:[];
const listed=(names)=>(Array.isArray(names)?names:[]).flatMap((name,index)=>index===0?[channel(name)]:[', ',channel(name)]);
const KINDS={join:'Join',part:'Part',kick:'Kick',quit:'Quit',nick:'Nick',topic:'Topic',mode:'Mode',away:'Away',
  connect:'Connect',channel_created:'Channel',channel_emptied:'Channel',server_linked:'Link',server_split:'Split',counts:'Counts'};
const SENTENCES={
  join:(d)=>[nick(d.nick),' joined ',channel(d.channel)],
  part:(d)=>[nick(d.nick),' left ',channel(d.channel),...quoted(d.reason)],
  kick:(d)=>[nick(d.nick),' was kicked from ',channel(d.channel),...(d.by?[' by ',plain(d.by)]:[]),...quoted(d.reason)],
  quit:(d)=>[plain(d.nick),...(d.killed_by?[' was disconnected by ',plain(d.killed_by)]:[' quit']),...quoted(d.reason),
    ...(Array.isArray(d.channels)&&d.channels.length>0?[' (was in ',...listed(d.channels),')']:[])],
  nick:(d)=>[plain(d.old_nick),' is now ',nick(d.new_nick)],
  topic:(d)=>typeof d.topic==='string'&&d.topic!==''
    ?[plain(d.set_by||'Someone'),' set the topic of ',channel(d.channel),...quoted(d.topic)]
    :[plain(d.set_by||'Someone'),' cleared the topic of ',channel(d.channel)],
  mode:(d)=>[plain(d.by||'The server'),' set ',span('mode',[d.change,...(Array.isArray(d.parameters)?d.parameters:[])].join(' ')),' on ',channel(d.channel)],
  away:(d)=>[nick(d.nick),d.away?' is away':' is back'],
  connect:(d)=>[nick(d.nick),' connected',...(d.server?[' to ',plain(d.server)]:[])],
  channel_created:(d)=>['New channel ',channel(d.channel)],
  channel_emptied:(d)=>[plain(d.channel),' is gone'],
  server_linked:(d)=>[plain(d.server),' linked',...(d.uplink?[' to ',plain(d.uplink)]:[]),...(d.description?[' (',plain(d.description),')']:[])],
  server_split:(d)=>[plain(d.server),' split from the network'],
  counts:(d)=>[number(d.users),' users, ',number(d.channels),' channels, ',number(d.operators),' operators, ',number(d.servers),' servers'],
};
const line=(type,data)=>{
  const item=document.createElement('li');
  item.dataset.type=type;
  const when=new Date(typeof data.time==='string'?data.time:Date.now());
  const at=document.createElement('time');
  at.dateTime=when.toISOString();
  at.textContent=clock.format(when);
  const what=span('what','');
  what.append(...(SENTENCES[type]?SENTENCES[type](data):[type]));
  item.append(at,' ',span('kind',KINDS[type]||type),' ',what);
  return item;
};
const note=(text)=>{const item=document.createElement('li');item.className='note';item.textContent=text;return item;};
const show=(items)=>{
  for(const item of items){lines.prepend(item);flash(item);}
  while(lines.children.length>limit)lines.lastElementChild.remove();
};
let paused=false;
let held=[];
let dropped=0;
let connection='connecting';
const STATES={
  connecting:'Connecting to the event stream…',
  open:'Connected: new events show at the top as they happen.',
  reconnecting:'The connection dropped: reconnecting…',
  hidden:'Closed while this tab is hidden; it reopens with what it missed when the tab shows again.',
};
const status=()=>{if(connection in STATES)say(paused&&connection==='open'?'Paused: new events are held until you resume.':STATES[connection]);};
const heldSay=()=>{
  const count=held.length+dropped;
  heldText.textContent=paused?(count===0?'None held yet.':count.toLocaleString('en-US')+(count===1?' event held.':' events held.')):'';
};
const arrive=(item)=>{
  if(!paused){show([item]);return;}
  held.push(item);
  if(held.length>limit){held.shift();dropped++;}
  heldSay();
};
pause.addEventListener('click',()=>{
  paused=!paused;
  pause.textContent=paused?'Resume':'Pause';
  if(!paused){
    const items=dropped>0?[note(dropped.toLocaleString('en-US')+' older events were dropped while paused: at most '+limit+' are held.'),...held]:held;
    held=[];
    dropped=0;
    show(items);
  }
  heldSay();
  status();
});
const boxes=[...form.querySelectorAll('input[name="types"]')];
const field=form.querySelector('input[name="channel"]');
const chosen=()=>{
  let name=field.value.trim();
  if(name!==''&&!/^[#&+!]/.test(name))name='#'+name;
  return {types:boxes.filter((box)=>box.checked).map((box)=>box.value),channel:name};
};
const queryOf=(filters)=>filters.channel?{types:filters.types.join(','),channel:filters.channel}:{types:filters.types.join(',')};
const describe=(filters)=>{
  const kinds=filters.types.length===boxes.length?'every kind of event':boxes.filter((box)=>box.checked).map((box)=>box.parentElement.textContent.trim().toLowerCase()).join(', ');
  return kinds+(filters.channel?' in '+filters.channel:'');
};
let filters=chosen();
const stream=follow(queryOf(filters),{
  types:Object.keys(SENTENCES),
  state(now){connection=now;status();},
  event(type,data){arrive(line(type,data));},
  gap(data){arrive(note(typeof data.message==='string'?data.message:'Some events were missed.'));},
  end(data){if(typeof data.message==='string')arrive(note(data.message));},
  refused(why){
    connection='refused';
    if(why.status===404){
      form.hidden=true;
      pause.hidden=true;
      const api=document.createElement('a');
      api.href='/network/api/';
      api.textContent='the API’s endpoints';
      say('Not available: this bot does not stream its events (its events plugin is not enabled). See ',api,'.');
      return;
    }
    const wait=Math.max(why.retry,30);
    say('The event stream was refused'+(why.message?': '+why.message:why.status?' (status '+why.status+')':'')+'. Trying again in '+wait+' s.');
    setTimeout(()=>stream.restart(queryOf(filters)),wait*1000);
  },
});
form.addEventListener('submit',(event)=>{
  event.preventDefault();
  const next=chosen();
  if(next.types.length===0){say('Choose at least one kind of event.');return;}
  filters=next;
  field.value=next.channel;
  history.replaceState(null,'',location.pathname+'?'+new URLSearchParams(queryOf(next)).toString());
  arrive(note('From here on: '+describe(next)+'.'));
  stream.restart(queryOf(next));
});
`;

/** A page's live script and its Content-Security-Policy source, made and hashed once. */
export interface LiveScript {
  code: string;
  source: string;
}

function liveScript(body: string): LiveScript {
  const code = `(()=>{${FOLLOW}${body}})();`;
  return { code, source: inlineScriptSource(code) };
}

export const STATUS_SCRIPT = liveScript(STATUS);
export const CHANNEL_SCRIPT = liveScript(CHANNEL);
export const LIVE_SCRIPT = liveScript(LIVE);
