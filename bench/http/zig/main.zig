//! cell-http-zig: the bench/http workloads on Zig 0.16's std (std.Io.Threaded,
//! std.http.Server, std.json). A cell benchmark target.
//!
//! Usage: cell-http-zig PORT
//!
//! One task per connection, each on its own thread of std.Io.Threaded
//! (`Group.concurrent`), doing plain blocking reads and writes through
//! std.http.Server. SIGTERM/SIGINT are blocked in every thread and read from
//! a signalfd by the main thread, which then cancels the accept loop and the
//! connections: Threaded interrupts the blocked syscalls, every connection
//! closes, and main returns 0. Linux only (signalfd, raw socket calls for the listener).

const std = @import("std");
const Io = std.Io;
const http = std.http;
const linux = std.os.linux;
const posix = std.posix;

/// Largest request body read (POST /users); a larger one gets 413.
const max_body = 64 * 1024;
/// Largest request head; a larger one gets 431.
const max_head = 8 * 1024;

/// The record of the post-json workload, bound from and echoed as JSON.
const User = struct {
    name: []const u8,
    age: Count,
    adult: bool,
};

/// A u64 that must be written as a JSON integer: std.json alone would also
/// bind "28" (a string) and 28.0 to a u64.
const Count = struct {
    value: u64,

    pub fn jsonParse(allocator: std.mem.Allocator, source: anytype, options: std.json.ParseOptions) !Count {
        const digits = switch (try source.nextAllocMax(allocator, .alloc_if_needed, options.max_value_len.?)) {
            .number, .allocated_number => |text| text,
            else => return error.UnexpectedToken,
        };
        if (!allDigits(digits)) return error.InvalidNumber; // -1, 28.0, 2.8e1
        return .{ .value = try std.fmt.parseInt(u64, digits, 10) };
    }

    pub fn jsonStringify(self: Count, jw: anytype) !void {
        try jw.write(self.value);
    }
};

pub fn main(init: std.process.Init.Minimal) u8 {
    var args = init.args.iterate();
    _ = args.skip();
    const port_arg = args.next() orelse usage();
    if (args.next() != null) usage();
    const port = parsePort(port_arg) orelse {
        say("cell-http-zig: invalid port '{s}'", .{port_arg});
        usage();
    };

    // Block the stop signals before any thread exists, so every thread
    // inherits the mask and only the signalfd ever sees them.
    var stop_signals = posix.sigemptyset();
    posix.sigaddset(&stop_signals, .TERM);
    posix.sigaddset(&stop_signals, .INT);
    posix.sigprocmask(linux.SIG.BLOCK, &stop_signals, null);
    const signal_fd = posix.signalfd(-1, &stop_signals, linux.SFD.CLOEXEC) catch |err| {
        say("cell-http-zig: signalfd: {t}", .{err});
        return 1;
    };

    // No `environ`: the server reads no environment variables. Connections
    // are `concurrent` tasks, so they are not bound by `async_limit`.
    var threaded: Io.Threaded = .init(std.heap.smp_allocator, .{});
    defer threaded.deinit();
    const io = threaded.io();

    var listener = listen(port) catch |err| {
        say("cell-http-zig: bind 127.0.0.1:{d}: {t}", .{ port, err });
        return 1;
    };
    defer listener.deinit(io);
    say("listening on 127.0.0.1:{d}", .{port});

    var connections: Io.Group = .init;
    var accepter = io.concurrent(acceptLoop, .{ io, &listener, &connections }) catch |err| {
        say("cell-http-zig: {t}", .{err});
        return 1;
    };

    var info: linux.signalfd_siginfo = undefined;
    while (true) {
        const rc = linux.read(signal_fd, @ptrCast(&info), @sizeOf(linux.signalfd_siginfo));
        if (linux.errno(rc) != .INTR) break;
    }
    // Stop accepting first: a connection added to the group while it is
    // being cancelled could miss the cancel request and keep it waiting.
    accepter.cancel(io) catch {};
    connections.cancel(io);
    return 0;
}

/// Writes one line to stderr with a plain write(2): std.debug.print would
/// scan the environment (NO_COLOR, CLICOLOR_FORCE) to pick a terminal mode.
fn say(comptime fmt: []const u8, args: anytype) void {
    var buf: [256]u8 = undefined;
    const line = std.fmt.bufPrint(&buf, fmt ++ "\n", args) catch return;
    _ = linux.write(2, line.ptr, line.len);
}

fn usage() noreturn {
    say("usage: cell-http-zig PORT", .{});
    std.process.exit(2);
}

fn parsePort(text: []const u8) ?u16 {
    if (!allDigits(text)) return null;
    const port = std.fmt.parseInt(u16, text, 10) catch return null;
    return if (port == 0) null else port;
}

fn allDigits(text: []const u8) bool {
    if (text.len == 0) return false;
    for (text) |c| if (!std.ascii.isDigit(c)) return false;
    return true;
}

/// The listener is made by hand: `IpAddress.listen` with `reuse_address`
/// also sets SO_REUSEPORT, which would let a second server share the port
/// silently instead of failing with "address in use".
fn listen(port: u16) !Io.net.Server {
    const fd: linux.fd_t = @intCast(try sys(linux.socket(linux.AF.INET, linux.SOCK.STREAM | linux.SOCK.CLOEXEC, 0)));
    errdefer _ = linux.close(fd);
    const one: c_int = 1;
    _ = try sys(linux.setsockopt(fd, linux.SOL.SOCKET, linux.SO.REUSEADDR, @ptrCast(&one), @sizeOf(c_int)));
    const addr: linux.sockaddr.in = .{
        .port = std.mem.nativeToBig(u16, port),
        .addr = std.mem.nativeToBig(u32, 0x7f00_0001),
    };
    _ = try sys(linux.bind(fd, @ptrCast(&addr), @sizeOf(linux.sockaddr.in)));
    _ = try sys(linux.listen(fd, 4096));
    return .{
        .socket = .{ .handle = fd, .address = .{ .ip4 = .loopback(port) } },
        .options = {},
    };
}

fn sys(rc: usize) !usize {
    return switch (linux.errno(rc)) {
        .SUCCESS => rc,
        .ADDRINUSE => error.AddressInUse,
        .ACCES => error.AccessDenied,
        else => error.Unexpected,
    };
}

fn acceptLoop(io: Io, listener: *Io.net.Server, group: *Io.Group) Io.Cancelable!void {
    while (true) {
        const stream = listener.accept(io) catch |err| switch (err) {
            error.Canceled => return error.Canceled,
            // Out of fds: back off rather than spin on the pending connection.
            error.ProcessFdQuotaExceeded, error.SystemFdQuotaExceeded, error.SystemResources => {
                try io.sleep(.fromMilliseconds(10), .awake);
                continue;
            },
            else => continue,
        };
        const one: c_int = 1;
        _ = linux.setsockopt(stream.socket.handle, linux.IPPROTO.TCP, linux.TCP.NODELAY, @ptrCast(&one), @sizeOf(c_int));
        group.concurrent(io, serveConnection, .{ io, stream }) catch stream.close(io);
    }
}

/// Per-connection scratch space, on the connection thread's stack.
const Scratch = struct {
    /// Request body, one byte more than allowed, to notice a larger one.
    body: [max_body + 1]u8 = undefined,
    /// JSON out. The echoed record is never much longer than the body it
    /// came from (a string's escapes come back at most as long as sent),
    /// plus at most 26 bytes for minimal's `"id":N,`.
    json: [max_body + 256]u8 = undefined,
    /// Allocations of std.json while binding the record (unescaped strings).
    heap: [2 * max_body]u8 = undefined,
};

fn serveConnection(io: Io, stream: Io.net.Stream) void {
    defer stream.close(io);
    var in_buf: [max_head]u8 = undefined;
    var out_buf: [8 * 1024]u8 = undefined;
    var reader = stream.reader(io, &in_buf);
    var writer = stream.writer(io, &out_buf);
    var server: http.Server = .init(&reader.interface, &writer.interface);
    var scratch: Scratch = .{};

    while (true) {
        var request = server.receiveHead() catch |err| {
            switch (err) {
                // Closed between requests, cancelled, or a broken socket.
                error.HttpConnectionClosing, error.HttpRequestTruncated, error.ReadFailed => {},
                error.HttpHeadersOversize => rawReply(&writer.interface, "431 Request Header Fields Too Large", "request header fields too large\n"),
                // std.http knows only the standard methods and HTTP/1.x.
                error.HttpHeadersInvalid => rawReply(&writer.interface, "400 Bad Request", "bad request\n"),
            }
            return;
        };
        const keep_alive = serveRequest(&request, &scratch) catch return;
        // Pipelined requests already buffered get their replies in one write.
        if (!keep_alive or reader.interface.bufferedLen() == 0)
            writer.interface.flush() catch return;
        if (!keep_alive) return;
    }
}

/// A response for a request whose head std.http could not parse.
fn rawReply(out: *Io.Writer, status: []const u8, body: []const u8) void {
    out.print("HTTP/1.1 {s}\r\ncontent-type: text/plain\r\nconnection: close\r\ncontent-length: {d}\r\n\r\n{s}", .{ status, body.len, body }) catch return;
    out.flush() catch return;
}

const Route = union(enum) {
    hello,
    json,
    user: u64,
    users,
    /// POST /minimal/users/{id}: the routed id and the bound body together.
    minimal_user: u64,
    not_found,
};

fn route(path: []const u8) Route {
    if (std.mem.eql(u8, path, "/")) return .hello;
    if (std.mem.eql(u8, path, "/json")) return .json;
    if (std.mem.eql(u8, path, "/users")) return .users;
    if (std.mem.startsWith(u8, path, "/users/"))
        return .{ .user = parseId(path["/users/".len..]) orelse return .not_found };
    if (std.mem.startsWith(u8, path, "/minimal/users/"))
        return .{ .minimal_user = parseId(path["/minimal/users/".len..]) orelse return .not_found };
    return .not_found;
}

/// The {id} of a route: a u64 in decimal digits, nothing else.
fn parseId(text: []const u8) ?u64 {
    // parseInt alone would also take "+42" and "4_2".
    if (!allDigits(text)) return null;
    return std.fmt.parseInt(u64, text, 10) catch null;
}

const Reply = struct {
    status: http.Status = .ok,
    content_type: []const u8 = "text/plain",
    body: []const u8,
    allow: ?[]const u8 = null,
    /// Close after replying: the request body is unread or was refused.
    close: bool = false,
};

const not_found: Reply = .{ .status = .not_found, .body = "not found\n" };
const bad_request: Reply = .{ .status = .bad_request, .body = "bad request\n" };

fn methodNotAllowed(allow: []const u8) Reply {
    return .{ .status = .method_not_allowed, .body = "method not allowed\n", .allow = allow };
}

/// Answers one request (unflushed); returns whether the connection stays open.
fn serveRequest(request: *http.Server.Request, scratch: *Scratch) !bool {
    const head = request.head;
    const target = head.target;
    const path = target[0 .. std.mem.findScalar(u8, target, '?') orelse target.len];
    const get = head.method == .GET;

    const reply: Reply = switch (route(path)) {
        .not_found => not_found,
        .hello => if (get) .{ .body = "hello, world\n" } else methodNotAllowed("GET"),
        .json => if (get) try jsonReply(scratch, .{ .message = "Hello, World!" }) else methodNotAllowed("GET"),
        .user => |id| if (get) try jsonReply(scratch, .{ .id = id }) else methodNotAllowed("GET"),
        .users => if (head.method == .POST) try postUser(request, scratch, null) else methodNotAllowed("POST"),
        .minimal_user => |id| if (head.method == .POST) try postUser(request, scratch, id) else methodNotAllowed("POST"),
    };

    // std.http.Server discards a body only for methods that have one
    // (POST, PUT, PATCH); a body on any other method would desynchronise
    // the connection, so close it instead. A POST without a length is never
    // routed to the discard (std asserts one exists).
    const stray_body = !head.method.requestHasBody() and (head.content_length orelse 0) != 0;
    const unframed = head.method.requestHasBody() and head.content_length == null and head.transfer_encoding == .none;
    const keep_alive = head.keep_alive and !reply.close and !stray_body and !unframed;

    var headers: [3]http.Header = undefined;
    var n: usize = 0;
    headers[n] = .{ .name = "content-type", .value = reply.content_type };
    n += 1;
    if (reply.allow) |allow| {
        headers[n] = .{ .name = "allow", .value = allow };
        n += 1;
    }
    // std writes `connection: keep-alive` only in an HTTP/1.0 status line;
    // the reply is HTTP/1.1 either way, so an HTTP/1.0 client is told here.
    if (keep_alive and head.version == .@"HTTP/1.0") {
        headers[n] = .{ .name = "connection", .value = "keep-alive" };
        n += 1;
    }
    try request.respondUnflushed(reply.body, .{
        .status = reply.status,
        .keep_alive = keep_alive,
        .extra_headers = headers[0..n],
    });
    return keep_alive;
}

/// Serialises `value` at request time into the connection's JSON buffer.
fn jsonReply(scratch: *Scratch, value: anytype) !Reply {
    var out: Io.Writer = .fixed(&scratch.json);
    try std.json.Stringify.value(value, .{}, &out);
    return .{ .content_type = "application/json", .body = out.buffered() };
}

/// POST /users: binds the body to `User` and echoes the record. With an `id`
/// (POST /minimal/users/{id}), the routed id is merged into the echo.
fn postUser(request: *http.Server.Request, scratch: *Scratch, id: ?u64) !Reply {
    const head = request.head;
    if (head.content_length == null and head.transfer_encoding == .none)
        return .{ .status = .length_required, .body = "length required\n", .close = true };
    if ((head.content_length orelse 0) > max_body)
        return .{ .status = .payload_too_large, .body = "payload too large\n", .close = true };

    // Sends "100 Continue" first if the client asked for it.
    const body_reader = try request.readerExpectContinue(&.{});
    const len = body_reader.readSliceShort(&scratch.body) catch return .{ .status = .bad_request, .body = "bad request\n", .close = true };
    if (len > max_body) // only a chunked body gets here
        return .{ .status = .payload_too_large, .body = "payload too large\n", .close = true };

    var fba: std.heap.FixedBufferAllocator = .init(&scratch.heap);
    const user = std.json.parseFromSliceLeaky(User, fba.allocator(), scratch.body[0..len], .{
        .ignore_unknown_fields = true,
    }) catch return bad_request;
    if (id) |value|
        return jsonReply(scratch, .{ .id = value, .name = user.name, .age = user.age, .adult = user.adult });
    return jsonReply(scratch, user);
}
