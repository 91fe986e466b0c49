export { serveMcpHttp, serveMcpStdio } from './server.js';
