// cell-http-cs: the bench/http workloads in C#, a cell benchmark target.
//
// Usage: mono cell-http-cs.exe PORT   (or the dotnet-built binary, see README.md)
//
// A raw Socket listener and one dedicated thread per connection doing
// blocking Receive/Send: with 64 keep-alive connections that is 64 threads,
// which both Mono and .NET handle well, and it avoids HttpListener (slow and
// quirky on Mono) and the thread pool (which injects threads for blocking
// work only slowly). HTTP/1.1 parsing and the JSON of the records are written
// here because Debian's Mono ships no JSON serializer. The request path uses
// only APIs common to Mono and modern .NET; what differs (SO_REUSEADDR and
// the stop signals) is isolated at the end of the file behind NETCOREAPP,
// which the .NET SDK defines and mcs does not.

using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;

static class Server
{
    static int Main(string[] args)
    {
        if (args.Length != 1)
            return Usage();
        int port = ParsePort(args[0]);
        if (port == 0)
        {
            Console.Error.WriteLine("cell-http-cs: invalid port '" + args[0] + "'");
            return Usage();
        }

        Socket listener;
        try
        {
            listener = Listen(port);
        }
        catch (SocketException e)
        {
            Console.Error.WriteLine("cell-http-cs: bind 127.0.0.1:" + port + ": " + e.Message);
            return 1;
        }
        var stop = StopSignal.Install();
        Console.Error.WriteLine("listening on 127.0.0.1:" + port);

        var accepter = new Thread(() => AcceptLoop(listener)) { IsBackground = true };
        accepter.Start();
        stop.Wait();
        return stop.Exit();
    }

    static int Usage()
    {
        Console.Error.WriteLine("usage: cell-http-cs PORT");
        return 2;
    }

    static int ParsePort(string s)
    {
        if (s.Length == 0 || s.Length > 5)
            return 0;
        int port = 0;
        foreach (char c in s)
        {
            if (c < '0' || c > '9')
                return 0;
            port = port * 10 + (c - '0');
        }
        return port <= 65535 ? port : 0;
    }

    static Socket Listen(int port)
    {
        var s = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        Runtime.ReuseAddress(s);
        s.Bind(new IPEndPoint(IPAddress.Loopback, port));
        s.Listen(4096);
        return s;
    }

    static void AcceptLoop(Socket listener)
    {
        while (true)
        {
            Socket client;
            try
            {
                client = listener.Accept();
            }
            catch (SocketException)
            {
                Thread.Sleep(10); // e.g. out of fds: back off instead of spinning
                continue;
            }
            client.NoDelay = true;
            var conn = new Connection(client);
            // A small stack: the handler is shallow (JSON nesting is bounded).
            new Thread(conn.Run, 256 * 1024) { IsBackground = true }.Start();
        }
    }
}

/// One keep-alive connection: parses requests from its input buffer and
/// queues the responses, sending them in one write per batch of pipelined
/// requests.
sealed class Connection
{
    const int MaxHead = 8 * 1024;
    const int MaxBody = 64 * 1024;

    static readonly UTF8Encoding StrictUtf8 = new UTF8Encoding(false, true);

    readonly Socket socket;
    byte[] input = new byte[16 * 1024];
    int start, end;            // unparsed input is input[start..end)
    readonly Bytes output = new Bytes(4096);
    readonly StringBuilder json = new StringBuilder(256);
    bool sentContinue;
    bool headRequest;          // the response being written gets no body

    public Connection(Socket socket)
    {
        this.socket = socket;
    }

    public void Run()
    {
        try
        {
            while (true)
            {
                Request req;
                int used = Request.Parse(input, start, end, out req);
                headRequest = false;
                if (used < 0)
                {
                    Reply(400, "bad request\n", close: true, keepAliveHeader: false);
                    break;
                }
                if (used == 0)
                {
                    if (end - start >= MaxHead)
                    {
                        Reply(431, "request header fields too large\n", close: true, keepAliveHeader: false);
                        break;
                    }
                    if (!Fill())
                        break;
                    continue;
                }

                if (req.Version < 0)
                {
                    Reply(505, "http version not supported\n", close: true, keepAliveHeader: false);
                    break;
                }
                if (req.Chunked)
                {
                    Reply(501, "not implemented\n", close: true, keepAliveHeader: false);
                    break;
                }
                if (req.ContentLength > MaxBody)
                {
                    Reply(413, "payload too large\n", close: true, keepAliveHeader: false);
                    break;
                }
                int body = (int)req.ContentLength;
                if (end - start < used + body)
                {
                    // The body is still on its way; a client that asked
                    // waits for "100 Continue" before sending it.
                    if (req.ExpectContinue && !sentContinue)
                    {
                        output.Ascii("HTTP/1.1 100 Continue\r\n\r\n");
                        sentContinue = true;
                    }
                    if (!Fill())
                        break;
                    continue;
                }

                bool keepAlive = req.Version == 1 ? !req.ConnectionClose : req.ConnectionKeepAlive && !req.ConnectionClose;
                Handle(ref req, start + used, body, keepAlive);
                start += used + body;
                sentContinue = false;
                if (!keepAlive)
                    break; // requests behind a closing one are ignored
            }
            Flush();
        }
        catch (SocketException) { }
        catch (ObjectDisposedException) { }
        finally
        {
            socket.Close();
        }
    }

    /// Sends queued responses, then reads more input. False at end of stream.
    bool Fill()
    {
        Flush();
        if (start == end)
        {
            start = end = 0;
        }
        else if (input.Length - end < 4096)
        {
            int live = end - start;
            if (start > 0)
                Buffer.BlockCopy(input, start, input, 0, live);
            else
                Array.Resize(ref input, Math.Max(input.Length * 2, live + 4096));
            start = 0;
            end = live;
        }
        int n = socket.Receive(input, end, input.Length - end, SocketFlags.None);
        if (n <= 0)
            return false;
        end += n;
        return true;
    }

    void Flush()
    {
        int off = 0;
        while (off < output.Length)
            off += socket.Send(output.Buffer, off, output.Length - off, SocketFlags.None);
        output.Clear();
    }

    void Handle(ref Request req, int bodyStart, int bodyLength, bool keepAlive)
    {
        // Only an HTTP/1.0 client is told that the connection stays open.
        bool kaHeader = keepAlive && req.Version == 0;
        string path = req.Path;
        bool get = req.Method == "GET";
        headRequest = req.Method == "HEAD"; // a 405, with its headers only

        if (path == "/")
        {
            if (get)
                Reply(200, "hello, world\n", !keepAlive, kaHeader);
            else
                NotAllowed("GET", !keepAlive, kaHeader);
        }
        else if (path == "/json")
        {
            if (get)
                ReplyJson(new Message { message = "Hello, World!" }.ToJson(Json.Begin(json)), !keepAlive, kaHeader);
            else
                NotAllowed("GET", !keepAlive, kaHeader);
        }
        else if (path == "/users")
        {
            if (req.Method != "POST")
            {
                NotAllowed("POST", !keepAlive, kaHeader);
                return;
            }
            User user = BindUser(bodyStart, bodyLength);
            if (user == null)
                Reply(400, "bad request\n", !keepAlive, kaHeader);
            else
                ReplyJson(user.ToJson(Json.Begin(json)), !keepAlive, kaHeader);
        }
        else if (path.StartsWith("/users/", StringComparison.Ordinal))
        {
            ulong id;
            if (!Json.TryParseDigits(path, "/users/".Length, path.Length, out id))
                Reply(404, "not found\n", !keepAlive, kaHeader);
            else if (get)
                ReplyJson(new UserId { id = id }.ToJson(Json.Begin(json)), !keepAlive, kaHeader);
            else
                NotAllowed("GET", !keepAlive, kaHeader);
        }
        else if (path.StartsWith("/minimal/users/", StringComparison.Ordinal))
        {
            // The body has been read already, so a 404 or 405 leaves the
            // connection in sync.
            ulong id;
            User user;
            if (!Json.TryParseDigits(path, "/minimal/users/".Length, path.Length, out id))
                Reply(404, "not found\n", !keepAlive, kaHeader);
            else if (req.Method != "POST")
                NotAllowed("POST", !keepAlive, kaHeader);
            else if ((user = BindUser(bodyStart, bodyLength)) == null)
                Reply(400, "bad request\n", !keepAlive, kaHeader);
            else
                ReplyJson(user.ToJson(Json.Begin(json), id), !keepAlive, kaHeader);
        }
        else
        {
            Reply(404, "not found\n", !keepAlive, kaHeader);
        }
    }

    /// The User in the request body, or null if it is not one (including
    /// invalid UTF-8).
    User BindUser(int bodyStart, int bodyLength)
    {
        try
        {
            return Json.ReadUser(StrictUtf8.GetString(input, bodyStart, bodyLength));
        }
        catch (ArgumentException) // invalid UTF-8 (DecoderFallbackException)
        {
            return null;
        }
    }

    void NotAllowed(string allow, bool close, bool keepAliveHeader)
    {
        Head(405, "text/plain", "method not allowed\n".Length, close, keepAliveHeader, allow);
        if (!headRequest)
            output.Ascii("method not allowed\n");
    }

    void Reply(int status, string body, bool close, bool keepAliveHeader)
    {
        Head(status, "text/plain", body.Length, close, keepAliveHeader, null);
        if (!headRequest)
            output.Ascii(body);
    }

    void ReplyJson(StringBuilder body, bool close, bool keepAliveHeader)
    {
        string text = body.ToString();
        int length = Encoding.UTF8.GetByteCount(text);
        Head(200, "application/json", length, close, keepAliveHeader, null);
        output.Utf8(text, length);
    }

    void Head(int status, string contentType, int length, bool close, bool keepAliveHeader, string allow)
    {
        output.Ascii("HTTP/1.1 ");
        output.Ascii(StatusLine(status));
        output.Ascii("\r\nContent-Type: ");
        output.Ascii(contentType);
        output.Ascii("\r\nContent-Length: ");
        output.Ascii(length.ToString());
        if (allow != null)
        {
            output.Ascii("\r\nAllow: ");
            output.Ascii(allow);
        }
        if (close)
            output.Ascii("\r\nConnection: close");
        else if (keepAliveHeader)
            output.Ascii("\r\nConnection: keep-alive");
        output.Ascii("\r\n\r\n");
    }

    static string StatusLine(int status)
    {
        switch (status)
        {
            case 200: return "200 OK";
            case 400: return "400 Bad Request";
            case 404: return "404 Not Found";
            case 405: return "405 Method Not Allowed";
            case 413: return "413 Payload Too Large";
            case 431: return "431 Request Header Fields Too Large";
            case 501: return "501 Not Implemented";
            default: return "505 HTTP Version Not Supported";
        }
    }
}

/// One parsed request head.
struct Request
{
    public string Method;
    public string Path;        // without the query string
    public int Version;        // 1 for HTTP/1.1, 0 for HTTP/1.0, -1 for anything else
    public bool ConnectionClose, ConnectionKeepAlive, Chunked, ExpectContinue;
    public long ContentLength;

    /// Parses the head in buf[from..to): the bytes it spans, 0 if it is
    /// not complete yet, -1 if it is malformed.
    public static int Parse(byte[] buf, int from, int to, out Request req)
    {
        req = default(Request);
        int pos = from;
        bool first = true, haveLength = false;
        while (true)
        {
            int nl = Array.IndexOf(buf, (byte)'\n', pos, to - pos);
            if (nl < 0)
                return 0;
            int lineStart = pos, lineEnd = nl;
            pos = nl + 1;
            if (lineEnd > lineStart && buf[lineEnd - 1] == '\r')
                lineEnd--;

            if (first)
            {
                if (lineEnd == lineStart)
                    continue; // a stray CRLF between requests
                first = false;
                int sp1 = Array.IndexOf(buf, (byte)' ', lineStart, lineEnd - lineStart);
                if (sp1 <= lineStart)
                    return -1;
                int sp2 = Array.IndexOf(buf, (byte)' ', sp1 + 1, lineEnd - sp1 - 1);
                if (sp2 <= sp1 + 1 || lineEnd - sp2 - 1 != 8 || !Ascii(buf, sp2 + 1, "HTTP/"))
                    return -1;
                req.Method = Encoding.ASCII.GetString(buf, lineStart, sp1 - lineStart);
                int targetEnd = Array.IndexOf(buf, (byte)'?', sp1 + 1, sp2 - sp1 - 1);
                if (targetEnd < 0)
                    targetEnd = sp2;
                req.Path = Encoding.ASCII.GetString(buf, sp1 + 1, targetEnd - sp1 - 1);
                byte major = buf[sp2 + 6], dot = buf[sp2 + 7], minor = buf[sp2 + 8];
                if (major < '0' || major > '9' || dot != '.' || minor < '0' || minor > '9')
                    return -1;
                req.Version = major == '1' && minor == '1' ? 1 : major == '1' && minor == '0' ? 0 : -1;
                continue;
            }

            if (lineEnd == lineStart)
                return pos - from; // end of the head

            int colon = Array.IndexOf(buf, (byte)':', lineStart, lineEnd - lineStart);
            if (colon <= lineStart)
                return -1;
            int v = colon + 1, vEnd = lineEnd;
            while (v < vEnd && (buf[v] == ' ' || buf[v] == '\t')) v++;
            while (vEnd > v && (buf[vEnd - 1] == ' ' || buf[vEnd - 1] == '\t')) vEnd--;
            int nameLength = colon - lineStart;

            if (Named(buf, lineStart, nameLength, "connection"))
            {
                // A comma-separated token list.
                foreach (string token in Encoding.ASCII.GetString(buf, v, vEnd - v).Split(','))
                {
                    string t = token.Trim();
                    if (t.Equals("close", StringComparison.OrdinalIgnoreCase))
                        req.ConnectionClose = true;
                    else if (t.Equals("keep-alive", StringComparison.OrdinalIgnoreCase))
                        req.ConnectionKeepAlive = true;
                }
            }
            else if (Named(buf, lineStart, nameLength, "content-length"))
            {
                if (v == vEnd || vEnd - v > 18)
                    return -1;
                long length = 0;
                for (int i = v; i < vEnd; i++)
                {
                    if (buf[i] < '0' || buf[i] > '9')
                        return -1;
                    length = length * 10 + (buf[i] - '0');
                }
                if (haveLength && length != req.ContentLength)
                    return -1;
                haveLength = true;
                req.ContentLength = length;
            }
            else if (Named(buf, lineStart, nameLength, "transfer-encoding"))
            {
                req.Chunked = true; // any transfer-coding: bodies are not decoded here
            }
            else if (Named(buf, lineStart, nameLength, "expect"))
            {
                req.ExpectContinue = Named(buf, v, vEnd - v, "100-continue");
            }
        }
    }

    static bool Ascii(byte[] buf, int at, string s)
    {
        for (int i = 0; i < s.Length; i++)
            if (buf[at + i] != s[i])
                return false;
        return true;
    }

    /// Case-insensitive match of buf[at..at+length) with a lower-case name.
    static bool Named(byte[] buf, int at, int length, string name)
    {
        if (length != name.Length)
            return false;
        for (int i = 0; i < length; i++)
        {
            int c = buf[at + i];
            if (c >= 'A' && c <= 'Z')
                c += 'a' - 'A';
            if (c != name[i])
                return false;
        }
        return true;
    }
}

/// A growable byte buffer for responses.
sealed class Bytes
{
    public byte[] Buffer;
    public int Length;

    public Bytes(int capacity)
    {
        Buffer = new byte[capacity];
    }

    public void Clear()
    {
        Length = 0;
    }

    void Reserve(int n)
    {
        if (Length + n > Buffer.Length)
            Array.Resize(ref Buffer, Math.Max(Buffer.Length * 2, Length + n));
    }

    public void Ascii(string s)
    {
        Reserve(s.Length);
        for (int i = 0; i < s.Length; i++)
            Buffer[Length + i] = (byte)s[i];
        Length += s.Length;
    }

    public void Utf8(string s, int byteCount)
    {
        Reserve(byteCount);
        Length += Encoding.UTF8.GetBytes(s, 0, s.Length, Buffer, Length);
    }
}

// ---- the records and their JSON ----------------------------------------

sealed class Message
{
    public string message;

    public StringBuilder ToJson(StringBuilder sb)
    {
        sb.Append("{\"message\":");
        Json.WriteString(sb, message);
        return sb.Append('}');
    }
}

sealed class UserId
{
    public ulong id;

    public StringBuilder ToJson(StringBuilder sb)
    {
        return sb.Append("{\"id\":").Append(id).Append('}');
    }
}

/// The record of the post-json workload (and of minimal, with its id).
sealed class User
{
    public string name;
    public ulong age;
    public bool adult;

    public StringBuilder ToJson(StringBuilder sb)
    {
        sb.Append('{');
        return Fields(sb).Append('}');
    }

    /// The record with the routed id of POST /minimal/users/{id} merged in.
    public StringBuilder ToJson(StringBuilder sb, ulong id)
    {
        sb.Append("{\"id\":").Append(id).Append(',');
        return Fields(sb).Append('}');
    }

    StringBuilder Fields(StringBuilder sb)
    {
        sb.Append("\"name\":");
        Json.WriteString(sb, name);
        sb.Append(",\"age\":").Append(age);
        return sb.Append(",\"adult\":").Append(adult ? "true" : "false");
    }
}

/// A strict JSON reader (RFC 8259) just large enough to bind a User, and
/// the string escaping of the writer.
static class Json
{
    sealed class Invalid : Exception { }

    public static StringBuilder Begin(StringBuilder sb)
    {
        sb.Length = 0;
        return sb;
    }

    public static void WriteString(StringBuilder sb, string s)
    {
        sb.Append('"');
        foreach (char c in s)
        {
            switch (c)
            {
                case '"': sb.Append("\\\""); break;
                case '\\': sb.Append("\\\\"); break;
                case '\n': sb.Append("\\n"); break;
                case '\r': sb.Append("\\r"); break;
                case '\t': sb.Append("\\t"); break;
                case '\b': sb.Append("\\b"); break;
                case '\f': sb.Append("\\f"); break;
                default:
                    if (c < 0x20)
                        sb.Append("\\u00").Append(((int)c).ToString("x2"));
                    else
                        sb.Append(c);
                    break;
            }
        }
        sb.Append('"');
    }

    /// s[from..to) as an unsigned 64-bit decimal; digits only, no sign.
    public static bool TryParseDigits(string s, int from, int to, out ulong value)
    {
        value = 0;
        if (from >= to)
            return false;
        for (int i = from; i < to; i++)
        {
            uint d = (uint)(s[i] - '0');
            if (d > 9 || value > (ulong.MaxValue - d) / 10)
                return false;
            value = value * 10 + d;
        }
        return true;
    }

    /// The record in `text`, or null if it is not valid JSON, lacks a
    /// field, repeats one, or has one of the wrong type. Unknown fields
    /// are skipped.
    public static User ReadUser(string text)
    {
        try
        {
            int i = 0;
            var user = new User();
            bool haveName = false, haveAge = false, haveAdult = false;
            Expect(text, ref i, '{');
            if (Peek(text, ref i) != '}')
            {
                while (true)
                {
                    string key = ReadString(text, ref i);
                    Expect(text, ref i, ':');
                    Peek(text, ref i);
                    switch (key)
                    {
                        case "name":
                            if (haveName) throw new Invalid();
                            if (Peek(text, ref i) != '"') throw new Invalid();
                            user.name = ReadString(text, ref i);
                            haveName = true;
                            break;
                        case "age":
                            if (haveAge) throw new Invalid();
                            user.age = ReadCount(text, ref i);
                            haveAge = true;
                            break;
                        case "adult":
                            if (haveAdult) throw new Invalid();
                            if (Literal(text, ref i, "true")) user.adult = true;
                            else if (Literal(text, ref i, "false")) user.adult = false;
                            else throw new Invalid();
                            haveAdult = true;
                            break;
                        default:
                            SkipValue(text, ref i, 0);
                            break;
                    }
                    if (Peek(text, ref i) == ',')
                    {
                        i++;
                        Peek(text, ref i);
                        continue;
                    }
                    break;
                }
            }
            Expect(text, ref i, '}');
            if (Peek(text, ref i) != '\0' || i != text.Length)
                throw new Invalid(); // something after the object
            return haveName && haveAge && haveAdult ? user : null;
        }
        catch (Invalid)
        {
            return null;
        }
    }

    /// Skips whitespace and returns the next char ('\0' at the end).
    static char Peek(string s, ref int i)
    {
        while (i < s.Length && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
            i++;
        return i < s.Length ? s[i] : '\0';
    }

    static void Expect(string s, ref int i, char c)
    {
        if (Peek(s, ref i) != c || i >= s.Length)
            throw new Invalid();
        i++;
    }

    static bool Literal(string s, ref int i, string word)
    {
        if (string.CompareOrdinal(s, i, word, 0, word.Length) != 0)
            return false;
        i += word.Length;
        return true;
    }

    /// An unsigned integer: digits only, so -1, 28.0 and 2.8e1 are refused.
    static ulong ReadCount(string s, ref int i)
    {
        int from = i;
        while (i < s.Length && s[i] >= '0' && s[i] <= '9')
            i++;
        ulong value;
        if (i == from || (s[from] == '0' && i - from > 1) || !TryParseDigits(s, from, i, out value))
            throw new Invalid();
        if (i < s.Length && (s[i] == '.' || s[i] == 'e' || s[i] == 'E'))
            throw new Invalid();
        return value;
    }

    static string ReadString(string s, ref int i)
    {
        if (Peek(s, ref i) != '"')
            throw new Invalid();
        i++;
        int from = i;
        while (i < s.Length && s[i] != '"' && s[i] != '\\' && s[i] >= 0x20)
            i++;
        if (i < s.Length && s[i] == '"')
            return s.Substring(from, i++ - from); // no escapes: the common case

        var sb = new StringBuilder(s, from, i - from, i - from + 16);
        while (true)
        {
            if (i >= s.Length)
                throw new Invalid();
            char c = s[i++];
            if (c == '"')
                return sb.ToString();
            if (c < 0x20)
                throw new Invalid();
            if (c != '\\')
            {
                sb.Append(c);
                continue;
            }
            if (i >= s.Length)
                throw new Invalid();
            switch (s[i++])
            {
                case '"': sb.Append('"'); break;
                case '\\': sb.Append('\\'); break;
                case '/': sb.Append('/'); break;
                case 'b': sb.Append('\b'); break;
                case 'f': sb.Append('\f'); break;
                case 'n': sb.Append('\n'); break;
                case 'r': sb.Append('\r'); break;
                case 't': sb.Append('\t'); break;
                case 'u':
                    char u = Hex4(s, ref i);
                    if (char.IsHighSurrogate(u))
                    {
                        // Must be followed by its low half, as another \u escape.
                        if (!Literal(s, ref i, "\\u"))
                            throw new Invalid();
                        char low = Hex4(s, ref i);
                        if (!char.IsLowSurrogate(low))
                            throw new Invalid();
                        sb.Append(u).Append(low);
                    }
                    else if (char.IsLowSurrogate(u))
                    {
                        throw new Invalid();
                    }
                    else
                    {
                        sb.Append(u);
                    }
                    break;
                default:
                    throw new Invalid();
            }
        }
    }

    static char Hex4(string s, ref int i)
    {
        if (i + 4 > s.Length)
            throw new Invalid();
        int v = 0;
        for (int k = 0; k < 4; k++)
        {
            char c = s[i++];
            int d = c >= '0' && c <= '9' ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0)
                throw new Invalid();
            v = v * 16 + d;
        }
        return (char)v;
    }

    /// Skips any JSON value (of a field the record does not have).
    static void SkipValue(string s, ref int i, int depth)
    {
        if (depth > 64)
            throw new Invalid();
        char c = Peek(s, ref i);
        if (c == '"')
        {
            ReadString(s, ref i);
        }
        else if (c == '{' || c == '[')
        {
            char close = c == '{' ? '}' : ']';
            i++;
            if (Peek(s, ref i) == close)
            {
                i++;
                return;
            }
            while (true)
            {
                if (c == '{')
                {
                    ReadString(s, ref i);
                    Expect(s, ref i, ':');
                }
                SkipValue(s, ref i, depth + 1);
                char next = Peek(s, ref i);
                i++;
                if (next == close)
                    return;
                if (next != ',')
                    throw new Invalid();
            }
        }
        else if (c == '-' || (c >= '0' && c <= '9'))
        {
            SkipNumber(s, ref i);
        }
        else if (!Literal(s, ref i, "true") && !Literal(s, ref i, "false") && !Literal(s, ref i, "null"))
        {
            throw new Invalid();
        }
    }

    /// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    static void SkipNumber(string s, ref int i)
    {
        if (s[i] == '-')
            i++;
        if (i < s.Length && s[i] == '0')
            i++;
        else if (Digits(s, ref i) == 0)
            throw new Invalid();
        if (i < s.Length && s[i] == '.')
        {
            i++;
            if (Digits(s, ref i) == 0)
                throw new Invalid();
        }
        if (i < s.Length && (s[i] == 'e' || s[i] == 'E'))
        {
            i++;
            if (i < s.Length && (s[i] == '+' || s[i] == '-'))
                i++;
            if (Digits(s, ref i) == 0)
                throw new Invalid();
        }
    }

    static int Digits(string s, ref int i)
    {
        int from = i;
        while (i < s.Length && s[i] >= '0' && s[i] <= '9')
            i++;
        return i - from;
    }
}

// ---- the parts that differ by runtime: SO_REUSEADDR and SIGTERM/SIGINT ----

static class Runtime
{
    /// SO_REUSEADDR alone. Both runtimes' ReuseAddress option also sets
    /// SO_REUSEPORT, which would let a second server bind the same port
    /// instead of failing with "address in use".
    public static void ReuseAddress(Socket s)
    {
#if NETCOREAPP
        if (OperatingSystem.IsLinux())
            s.SetRawSocketOption(1, 2, BitConverter.GetBytes(1)); // SOL_SOCKET, SO_REUSEADDR
        else
            s.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
#else
        // Mono already sets SO_REUSEADDR on every TCP socket.
        if ((int)s.GetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress) == 0)
            s.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
#endif
    }
}

#if NETCOREAPP
/// Modern .NET: PosixSignalRegistration. Cancelling the default action
/// leaves the exit to Main, which returns 0.
sealed class StopSignal
{
    readonly ManualResetEventSlim stopped = new ManualResetEventSlim();
    PosixSignalRegistration term, interrupt;

    public static StopSignal Install()
    {
        var s = new StopSignal();
        Action<PosixSignalContext> stop = context =>
        {
            context.Cancel = true;
            s.stopped.Set();
        };
        s.term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, stop);
        s.interrupt = PosixSignalRegistration.Create(PosixSignal.SIGINT, stop);
        return s;
    }

    public void Wait()
    {
        stopped.Wait();
        GC.KeepAlive(term);
        GC.KeepAlive(interrupt);
    }

    /// Main returns this; the connection threads are background threads.
    public int Exit()
    {
        return 0;
    }
}
#else
/// Mono: the signal handler of libMonoPosixHelper, the native half of
/// Mono.Unix.UnixSignal. Debian's mono-runtime ships the helper library
/// but not Mono.Posix.dll, so it is called directly: its handler only
/// counts the signal and writes a byte to a pipe that WaitAny polls, which
/// is safe in a signal handler.
sealed class StopSignal
{
    const int SIGINT = 2, SIGTERM = 15; // Linux (and macOS) numbers

    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    delegate int RuntimeIsShuttingDown();

    [DllImport("MonoPosixHelper")]
    static extern IntPtr Mono_Unix_UnixSignal_install(int signum);

    [DllImport("MonoPosixHelper")]
    static extern int Mono_Unix_UnixSignal_WaitAny(IntPtr[] infos, int count, int timeoutMs, RuntimeIsShuttingDown shuttingDown);

    static readonly RuntimeIsShuttingDown Never = () => 0;

    readonly IntPtr[] infos;

    StopSignal(IntPtr[] infos)
    {
        this.infos = infos;
    }

    public static StopSignal Install()
    {
        var infos = new[] { Mono_Unix_UnixSignal_install(SIGTERM), Mono_Unix_UnixSignal_install(SIGINT) };
        if (infos[0] == IntPtr.Zero || infos[1] == IntPtr.Zero)
            throw new InvalidOperationException("cannot install the SIGTERM/SIGINT handlers");
        return new StopSignal(infos);
    }

    [DllImport("libc", EntryPoint = "_exit")]
    static extern void ExitNow(int status);

    public void Wait()
    {
        // The pipe only gets a byte while WaitAny runs; a signal that came
        // before is seen in the handler's count (the second int of its
        // record), checked before every wait.
        while (!Counted())
        {
            int r = Mono_Unix_UnixSignal_WaitAny(infos, infos.Length, 100, Never);
            if (r == 0 || r == 1)
                return;
            if (r < 0)
                Thread.Sleep(100); // not expected; the count still works
        }
    }

    bool Counted()
    {
        foreach (IntPtr info in infos)
            if (Marshal.ReadInt32(info, 4) > 0)
                return true;
        return false;
    }

    /// Mono's own shutdown (returning from Main, or Environment.Exit) waits
    /// for or aborts the threads still in socket calls: under load it hung
    /// for seconds or died of SIGABRT. Nothing is buffered (stdout is never
    /// written, stderr is unbuffered), so the process ends here.
    public int Exit()
    {
        ExitNow(0);
        return 0;
    }
}
#endif
