'use strict';
// cell-http-node-cluster: bench/http/node's server under node:cluster, one
// worker per CPU this process may run on (os.availableParallelism()).
//
// Usage: node server.js PORT
//
// The primary serves nothing: it forks, prints the listening line once
// every worker listens, forwards SIGTERM/SIGINT and exits 0 once every
// worker has exited 0. A worker that dies on its own is reported and makes
// the primary stop the others and exit 1: it is not re-forked, so a
// benchmark run notices.

const cluster = require('node:cluster');
const os = require('node:os');
const { parsePort, serve } = require('../node/server.js');

const port = parsePort(process.argv);

function primary() {
  const count = os.availableParallelism();
  let listening = 0;
  let alive = count;
  let stopping = false;
  let failed = false;

  const stop = () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGTERM');
  };

  cluster.on('listening', () => {
    if (++listening === count) process.stderr.write(`listening on 127.0.0.1:${port}\n`);
  });
  cluster.on('exit', (worker, code, signal) => {
    if (!stopping || code !== 0) {
      failed = true;
      const how = signal ? `signal ${signal}` : `status ${code}`;
      process.stderr.write(`server.js: worker ${worker.process.pid} exited with ${how}\n`);
      if (!stopping) stop();
    }
    if (--alive === 0) process.exit(failed ? 1 : 0);
  });
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  // Round-robin (Node's Linux default, set so no environment variable can
  // change it): the primary accepts and hands each connection to the next
  // worker, which spreads a load generator's few long connections evenly.
  cluster.schedulingPolicy = cluster.SCHED_RR;
  for (let i = 0; i < count; i++) cluster.fork();
}

if (cluster.isPrimary) primary();
else serve(port, () => {}); // the primary prints the listening line
