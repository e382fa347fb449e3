/** CPU time and memory of other processes, from /proc (Linux). */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

let ticksPerSecond: number | null = null;

function clockTicks(): number {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU seconds the process has used so far; NaN once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  } catch {
    return NaN;
  }
}

/** Resident set size in bytes; NaN once the process is gone. */
export function rssBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** The largest RSS the process has had (VmHWM), in bytes. */
export function peakRssBytes(pid: number): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** How fast a process's counter of seconds (CPU, run-queue wait) grew between two moments, as a share of the time. */
class SecondsMeter {
  private seconds: number;
  private at: number;

  constructor(private readonly read: () => number) {
    this.seconds = read();
    this.at = performance.now();
  }

  /** Percent of the time since the meter started (or since the last `restart`). */
  percent(): number {
    return (100 * this.used()) / ((performance.now() - this.at) / 1000);
  }

  /** Seconds counted since the meter started. */
  used(): number {
    return this.read() - this.seconds;
  }

  restart(): void {
    this.seconds = this.read();
    this.at = performance.now();
  }
}

/** CPU use between two moments, as a share of one core. */
export class CpuMeter extends SecondsMeter {
  constructor(pid: number) {
    super(() => cpuSeconds(pid));
  }
}

/** Seconds a thread has waited on a run queue for a CPU (schedstat's second field); NaN when unknown. */
export function runQueueSeconds(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(' ');
    return Number(fields[1]) / 1e9;
  } catch {
    return NaN;
  }
}

/**
 * How long a process's main thread waited for a CPU between two moments, as a share of the time: on a
 * machine whose cores the network under test also needs, the latency of the bot's answers includes it.
 */
export class RunQueueMeter extends SecondsMeter {
  constructor(pid: number) {
    super(() => runQueueSeconds(pid));
  }
}

/**
 * CPU seconds the whole machine has been busy so far, over all its CPUs, divided by their number (/proc/stat's
 * first line: everything but idle and I/O wait); NaN where unknown.
 */
export function machineBusySeconds(): number {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number) as number[];
    const busy = user! + nice! + system! + irq! + softirq! + (steal ?? 0);
    return busy / clockTicks() / os.cpus().length;
  } catch {
    return NaN;
  }
}

/** How busy the machine's CPUs were between two moments, as a share of all of them. */
export class MachineMeter extends SecondsMeter {
  constructor() {
    super(machineBusySeconds);
  }
}

/**
 * The niceness the network's processes (IRC servers, services, crowd) run at: they stand for other
 * machines, so the bot and the load generator are served first on a machine that runs them all.
 * `BENCH_SCALE_NICE=0` runs them at the bench's own priority.
 */
export function networkNiceness(): number {
  const text = process.env.BENCH_SCALE_NICE;
  const value = text === undefined || text === '' ? 10 : Number(text);
  return Number.isInteger(value) && value >= 0 && value <= 19 ? value : 10;
}
