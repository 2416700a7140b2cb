<?php
// The bench/http workloads as a router script for PHP's built-in web server
// (php -S). The server runs this file once per request; serve.php starts it.

declare(strict_types=1);

const MAX_BODY = 65536;
const U64_MAX = '18446744073709551615';

// The record POST /users and POST /minimal/users/{id} bind their body to.
final class User
{
    public function __construct(
        public readonly string $name,
        public readonly int $age,
        public readonly bool $adult,
    ) {
    }

    // The User in a JSON body, or null when the body is not one: bad JSON, a
    // missing field or a wrong type. Unknown fields are ignored. age must be
    // a PHP int (json_decode makes integers above PHP_INT_MAX floats).
    public static function fromJson(string $body): ?self
    {
        try {
            $v = json_decode($body, false, 512, JSON_THROW_ON_ERROR);
        } catch (JsonException) {
            return null;
        }
        if (!$v instanceof stdClass
            || !is_string($v->name ?? null)
            || !is_int($v->age ?? null) || $v->age < 0
            || !is_bool($v->adult ?? null)) {
            return null;
        }
        return new self($v->name, $v->age, $v->adult);
    }
}

// Sets Content-Length itself: php -S would otherwise end the body by
// closing the connection. Content-Type stays exact because serve.php sets
// default_charset to "" (PHP appends "; charset=..." to text/* otherwise).
function reply(int $status, string $type, string $body, string ...$headers): void
{
    http_response_code($status);
    header("Content-Type: $type");
    header('Content-Length: ' . strlen($body));
    foreach ($headers as $h) {
        header($h);
    }
    echo $body;
}

function json(mixed $value): void
{
    reply(200, 'application/json', json_encode($value, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE));
}

function not_found(): void
{
    reply(404, 'text/plain', "not found\n");
}

function not_allowed(string $allow): void
{
    reply(405, 'text/plain', "method not allowed\n", "Allow: $allow");
}

// The canonical decimal digits of an unsigned 64-bit integer, or null.
// Compared as strings: a PHP int is signed and stops at 2^63 - 1.
function parse_u64(string $s): ?string
{
    if (!preg_match('/^[0-9]{1,20}$/', $s)) {
        return null;
    }
    $s = ltrim($s, '0');
    if ($s === '') {
        return '0';
    }
    if (strlen($s) === 20 && strcmp($s, U64_MAX) > 0) {
        return null;
    }
    return $s;
}

// POST /users, and POST /minimal/users/{id} with the routed id (canonical
// u64 digits, see parse_u64) merged into the record.
function create_user(?string $id = null): void
{
    if ((int) ($_SERVER['CONTENT_LENGTH'] ?? 0) > MAX_BODY) {
        reply(413, 'text/plain', "payload too large\n");
        return;
    }
    $user = User::fromJson(file_get_contents('php://input'));
    if ($user === null) {
        reply(400, 'text/plain', "bad request\n");
    } elseif ($id === null) {
        json($user);
    } else {
        // json_encode has no u64, so the id goes in as its digits: the
        // record is serialised as usual and the id spliced in front.
        $record = json_encode($user, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
        reply(200, 'application/json', "{\"id\":$id," . substr($record, 1));
    }
}

function route(string $method, string $path): void
{
    switch ($path) {
        case '/':
            $method === 'GET' ? reply(200, 'text/plain', "hello, world\n") : not_allowed('GET');
            return;
        case '/json':
            $method === 'GET' ? json(['message' => 'Hello, World!']) : not_allowed('GET');
            return;
        case '/users':
            $method === 'POST' ? create_user() : not_allowed('POST');
            return;
    }
    if (str_starts_with($path, '/users/')) {
        $id = parse_u64(substr($path, strlen('/users/')));
        if ($id === null) {
            not_found();
        } elseif ($method !== 'GET') {
            not_allowed('GET');
        } else {
            // json_encode has no u64; the canonical digits are the number.
            reply(200, 'application/json', "{\"id\":$id}");
        }
        return;
    }
    if (str_starts_with($path, '/minimal/users/')) {
        // php -S has read the whole body already, so a 404 leaves nothing
        // unread (and it closes every connection anyway).
        $id = parse_u64(substr($path, strlen('/minimal/users/')));
        if ($id === null) {
            not_found();
        } elseif ($method !== 'POST') {
            not_allowed('POST');
        } else {
            create_user($id);
        }
        return;
    }
    not_found();
}

route($_SERVER['REQUEST_METHOD'], explode('?', $_SERVER['REQUEST_URI'], 2)[0]);
