/** The part of autocannon's programmatic API the benchmarks use (the package ships no types). */
declare module 'autocannon' {
  interface Percentiles {
    average: number;
    mean: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
  }

  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    pipelining?: number;
    headers?: Record<string, string>;
    method?: string;
    /** Requests per second from all connections together (latencies corrected for coordinated omission). */
    overallRate?: number;
    /** Each connection sends these in turn, from the first again after the last. */
    requests?: { method?: string; path: string; headers?: Record<string, string> }[];
  }

  export interface Result {
    requests: Percentiles & { total: number; sent: number };
    latency: Percentiles;
    throughput: Percentiles;
    errors: number;
    timeouts: number;
    non2xx: number;
    duration: number;
  }

  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
