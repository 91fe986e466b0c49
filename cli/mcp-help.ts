/** How `notary mcp` calls pay (its help's last lines): the MCP server is a client of the API, paying as one. */
export const MCP_PAYMENT_HELP =
  '\nThe API key is read from NOTARY_API_KEY (never from the command line). Without one, calls are paid per call by the MCP client through x402 (_meta["x402/payment"]).';
