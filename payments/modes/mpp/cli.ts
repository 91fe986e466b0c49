import { InvalidArgumentError, type Command } from 'commander';

function nonNegativeInt(v: string): number {
  if (!/^\d+$/.test(v)) throw new InvalidArgumentError('must be a non-negative integer');
  return Number(v);
}

/** `notary mpp ...`: the client-side helpers of multi-party payments (no database needed). */
export function addMppCommands(program: Command): void {
  const mpp = program.command('mpp').description('client-side helpers for multi-party payments (no database needed)');
  mpp
    .command('keygen')
    .description('make a party key pair: writes the private JWK file, prints the public key alone on the last line')
    .requiredOption('--out <file>', 'where to write the private key (mode 0600)')
    .option('--force', 'replace an existing file')
    .action(async (opts: { out: string; force?: boolean }) => {
      const { mppKeygenCommand } = await import('./cli-commands.js');
      mppKeygenCommand(opts);
    });
  mpp
    .command('envelope')
    .description('build and sign an envelope for one call; prints it alone on the last line (use as Authorization: MPP envelope=...)')
    .requiredOption('--url <url>', 'the absolute URL of the call, e.g. http://127.0.0.1:8080/v1/search')
    .option('--method <method>', 'HTTP method', 'POST')
    .option('--body <json>', 'the exact request body that will be sent')
    .option('--body-file <file>', 'the exact request body, from a file ("-" for standard input)')
    .requiredOption('--credits <n>', 'total_credits: the most the call may cost (its price must not exceed it)', nonNegativeInt)
    .option('--party <name=share:keyfile>', 'a paying party, its share and its private key file (JWK or PEM); repeat per party; NAME=KEYFILE for equal shares', (v: string, all: string[]) => [...all, v], [] as string[])
    .option('--ttl <seconds>', `lifetime of the envelope, at most ${300}`, (v) => Number(v), 120)
    .option('--header', 'print the whole Authorization value (MPP envelope=...)')
    .action(async (opts: { url: string; method: string; body?: string; bodyFile?: string; credits: number; party: string[]; ttl: number; header?: boolean }) => {
      const { mppEnvelopeCommand } = await import('./cli-commands.js');
      mppEnvelopeCommand(opts);
    });
  mpp
    .command('decode')
    .description('print the JSON inside an envelope (verifies nothing)')
    .argument('<envelope>', 'the base64url envelope, or the whole "MPP envelope=..." value')
    .action(async (value: string) => {
      const { mppDecodeCommand } = await import('./cli-commands.js');
      mppDecodeCommand(value);
    });
}
