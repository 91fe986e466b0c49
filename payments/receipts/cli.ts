import type { Command } from 'commander';
import type { PluginCliContext } from '../plugin.js';

/** `notary receipts ...`: key rotation, offline verification and the log audit. */
export function addReceiptsCommands(program: Command, context: PluginCliContext): void {
  const receipts = program.command('receipts').description('signed receipts: keys, offline verification, log audit');
  receipts
    .command('rotate-key')
    .description('make a new current signing key; the old one is retired and keeps verifying the receipts it signed')
    .action(async () => {
      const { rotateKeyCommand } = await import('./cli-commands.js');
      await rotateKeyCommand(context.config());
    });
  receipts
    .command('verify')
    .description('verify a saved response (or receipt) offline: signature, kid, key validity at issued_at, response digest')
    .argument('<saved-response.json>')
    .option('--jwks <file-or-url>', 'the published key set to trust (default: <issuer>/.well-known/jwks.json)')
    .option('--request <file>', 'the exact request body that was sent, to check request_digest (a salted one with the saved response\'s notary_request_salt)')
    .action(async (file: string, opts: { jwks?: string; request?: string }) => {
      const { verifyCommand } = await import('./cli-commands.js');
      await verifyCommand(context.config(), file, opts);
    });
  receipts
    .command('audit')
    .description('offline audit from saved files: checkpoint signatures, consistency between checkpoints, inclusion of receipts')
    .argument('[files...]', 'checkpoints, JWKS, saved responses or receipts, inclusion and consistency proofs')
    .option('--jwks <file-or-url>', 'the published key set to trust')
    .option('--origin <origin>', 'the log origin to expect (default: the first checkpoint\'s)')
    .option('--local', "also re-hash this server's own log from its database")
    .action(async (files: string[], opts: { jwks?: string; origin?: string; local?: boolean }) => {
      const { auditCommand } = await import('./cli-commands.js');
      await auditCommand(context.config(), files, opts, (fn) => context.withStorage(fn));
    });
}
