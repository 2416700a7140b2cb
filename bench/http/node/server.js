'use strict';
// cell-http-node: the bench/http workloads on node:http, one process.
//
// Usage: node server.js PORT
//
// Binds 127.0.0.1 only (libuv sets SO_REUSEADDR on every TCP listener),
// logs nothing per request, reads no environment, exits 0 on SIGTERM/SIGINT.

const { createServer } = require('./app.js');

// The port from argv, or exit 2 with a usage line.
function parsePort(argv) {
  const arg = argv[2];
  if (argv.length !== 3 || !/^[0-9]{1,5}$/.test(arg) || +arg < 1 || +arg > 65535) {
    if (argv.length === 3) process.stderr.write(`server.js: invalid port ${JSON.stringify(arg)}\n`);
    process.stderr.write('usage: node server.js PORT\n');
    process.exit(2);
  }
  return +arg;
}

// Starts one server on 127.0.0.1:port and calls onListening once it
// listens; SIGTERM/SIGINT close it and every connection, then exit 0.
function serve(port, onListening) {
  const server = createServer();
  server.on('error', (err) => {
    process.stderr.write(`server.js: ${err.message}\n`);
    process.exit(1);
  });
  let stopping = false;
  const stop = () => {
    // A second signal (SIGINT to the whole group, then SIGTERM) must not
    // fall back to the default action, so stay subscribed and ignore it.
    if (stopping) return;
    stopping = true;
    // close() stops accepting; closeAllConnections() drops the idle and
    // busy keep-alive connections that would otherwise hold the loop open.
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  server.listen(port, '127.0.0.1', onListening);
}

if (require.main === module) {
  const port = parsePort(process.argv);
  serve(port, () => process.stderr.write(`listening on 127.0.0.1:${port}\n`));
}

module.exports = { parsePort, serve };
