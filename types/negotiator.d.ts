/** The part of negotiator's API the server uses (the package ships no types). */
declare module 'negotiator' {
  export default class Negotiator {
    constructor(request: { headers: Record<string, string | string[] | undefined> });
    /** The client's most preferred of `available`, ties going to the first of `options.preferred`. */
    encoding(available: string[], options?: { preferred?: string[] }): string | undefined;
  }
}
