<?php
// cell-http-php: runs PHP's built-in web server on router.php.
//
// Usage: php serve.php PORT
//
// php -S exits 0 on SIGINT but has no SIGTERM handler, so SIGTERM would kill
// it with the signal. This wrapper runs it as a child, turns SIGTERM (and
// SIGINT) into SIGINT for it and exits with its status.

declare(strict_types=1);

if ($argc !== 2 || !preg_match('/^[0-9]{1,5}$/', $argv[1]) || (int) $argv[1] < 1 || (int) $argv[1] > 65535) {
    fwrite(STDERR, "usage: php serve.php PORT\n");
    exit(2);
}

// The arguments of the child, the same PHP binary as this script's.
$args = [
    // -q: log errors only. Without it php -S logs every connection to
    // stderr; no php.ini setting controls that. Its start-up banner stays.
    '-q',
    // No "; charset=UTF-8" on text/plain, no X-Powered-By header, and no
    // warning text in a body whose Content-Length is already set.
    '-d', 'default_charset=',
    '-d', 'expose_php=0',
    '-d', 'display_errors=0',
    '-S', '127.0.0.1:' . $argv[1],
    __DIR__ . '/router.php',
];

$pid = pcntl_fork();
if ($pid === -1) {
    fwrite(STDERR, "serve.php: fork failed\n");
    exit(1);
}
if ($pid === 0) {
    pcntl_exec(PHP_BINARY, $args);
    exit(127); // exec failed (pcntl_exec has warned)
}

// No SA_RESTART (the false), so a signal interrupts pcntl_waitpid and the
// handler runs at once.
pcntl_async_signals(true);
$forward = fn () => posix_kill($pid, SIGINT);
pcntl_signal(SIGTERM, $forward, false);
pcntl_signal(SIGINT, $forward, false);

while (pcntl_waitpid($pid, $status) === -1) {
    if (pcntl_get_last_error() !== PCNTL_EINTR) {
        exit(1);
    }
}
exit(pcntl_wifexited($status) ? pcntl_wexitstatus($status) : 1);
