/**
 * Events of the HTTP server running in this process, seen through Node's diagnostics channels, so that
 * a test can wait for the server to have received requests instead of sleeping.
 */
import diagnostics from 'node:diagnostics_channel';

/** Resolves once the HTTP servers of this process have received `count` more requests (their heads). */
export function requestsReceived(count: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const onStart = (): void => {
      if (++seen < count) return;
      diagnostics.unsubscribe('http.server.request.start', onStart);
      resolve();
    };
    diagnostics.subscribe('http.server.request.start', onStart);
  });
}
