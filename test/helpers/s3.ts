import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './process.js';

/** A free TCP port on loopback. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A real S3-protocol server (s3rver) in a child process, on loopback, with one bucket.
 * Tests talk to it through the AWS SDK exactly as production talks to S3 or MinIO.
 */
export async function startS3Server(bucket: string): Promise<{ endpoint: string; stop(): Promise<void> }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'patchbay-s3-'));
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'node_modules', 's3rver', 'bin', 's3rver.js'), '-d', dir, '-a', '127.0.0.1', '-p', String(port), '--silent', '--configure-bucket', bucket],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const endpoint = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i += 1) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (up) break;
    if (child.exitCode !== null) throw new Error(`s3rver exited: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    endpoint,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
