// Ending a relayed connection at once, as a broken link would: a reset (RST), so that the other
// end sees the connection fail rather than finish. One exception, learnt the hard way: a socket
// whose own END is already on its way (end() called; libuv may still hold the shutdown request)
// must be destroyed instead. libuv refuses to reset a socket with a shutdown pending (EINVAL), and
// Node 20 marks the handle as closing before it asks, so the handle is then never closed: its
// thread can never exit, and a process exiting waits for that thread forever, spinning (seen in
// CI as a harness at 100 % of a core after its run; gdb showed the relay thread in
// Environment::CleanupHandles and the main thread joining it). Such a socket has said FIN
// already, so a destroy loses nothing a reset would have said.
import type { Socket } from 'node:net';

export function abortSocket(s: Socket): void {
  if (s.destroyed) return;
  if (s.writableEnded) s.destroy();
  // A socket still connecting (in this thread's view) resets once connected: a plain destroy there
  // would close it with a FIN, telling the target all was well.
  else s.resetAndDestroy();
}
