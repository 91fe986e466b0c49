/**
 * How `notary mcp`'s calls are paid, as its help and its start line say: the MCP server is a client of the API and
 * pays as one, with the API key from its environment or, without one, with the payments its MCP client forwards
 * (the x402 MCP transport this server speaks, see server.ts).
 */
export const MCP_PAYMENT_HELP =
  '\nThe API key is read from NOTARY_API_KEY (never from the command line). Without one, calls are paid per call by the MCP client through x402 (_meta["x402/payment"]).';

/** The start line's note on how calls are paid. */
export function payingNote(hasApiKey: boolean): string {
  return hasApiKey ? 'API key from NOTARY_API_KEY' : 'no API key: x402 payments from the MCP client';
}
