// A command in a container through the Docker API (exec, no shell, no tty), as the docker
// runtime runs tc in a holder and a swarm node's fault helper runs it in a member's task.
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';

/** Runs `argv` in the container; resolves with its stdout, rejects naming the command, its exit and its stderr. */
export async function execIn(container: Docker.Container, argv: string[]): Promise<string> {
  const e = await container.exec({ Cmd: argv, AttachStdout: true, AttachStderr: true });
  const stream = await e.start({});
  const out = new PassThrough();
  const err = new PassThrough();
  const chunks: Buffer[] = [];
  const errChunks: Buffer[] = [];
  out.on('data', (b: Buffer) => chunks.push(b));
  err.on('data', (b: Buffer) => errChunks.push(b));
  container.modem.demuxStream(stream, out, err);
  await new Promise<void>((resolve) => stream.on('end', resolve));
  const info = await e.inspect();
  if (info.ExitCode !== 0) {
    const said = Buffer.concat(errChunks).toString('utf8').trim();
    throw new Error(
      `${argv.join(' ')} failed in ${container.id.slice(0, 12)} (exit ${info.ExitCode}): ${said}`,
    );
  }
  return Buffer.concat(chunks).toString('utf8');
}
