//! The workloads: routing by path, the typed record bound from a JSON body,
//! and the JSON values serialised at request time.

use std::borrow::Cow;

use crate::http::{Status, parse_u64};
use crate::json::{self, Object, Reader};

pub const HELLO: &[u8] = b"hello, world\n";
pub const NOT_FOUND: &[u8] = b"not found\n";
pub const NOT_ALLOWED: &[u8] = b"method not allowed\n";
pub const BAD_REQUEST: &[u8] = b"bad request\n";
pub const TOO_LARGE: &[u8] = b"payload too large\n";
pub const UNSUPPORTED: &[u8] = b"unsupported media type\n";
pub const HEAD_TOO_LARGE: &[u8] = b"request header fields too large\n";
pub const NOT_IMPLEMENTED: &[u8] = b"not implemented\n";
pub const BAD_VERSION: &[u8] = b"http version not supported\n";

pub const TEXT: &str = "text/plain";
pub const JSON: &str = "application/json";

/// The largest body a route reads; a larger one is refused with 413.
pub const MAX_BODY: u64 = 64 * 1024;

/// A known path.
#[derive(Clone, Copy)]
pub enum Route {
    /// `GET /`
    Hello,
    /// `GET /json`
    Json,
    /// `GET /users/{id}`
    User(u64),
    /// `POST /users`
    Users,
    /// `POST /minimal/users/{id}`
    MinimalUser(u64),
}

impl Route {
    /// The path's route; `None` is a 404. The query was already cut off.
    pub fn of(path: &[u8]) -> Option<Route> {
        match path {
            b"/" => Some(Route::Hello),
            b"/json" => Some(Route::Json),
            b"/users" => Some(Route::Users),
            _ => {
                if let Some(id) = path.strip_prefix(b"/users/") {
                    parse_u64(id).map(Route::User)
                } else if let Some(id) = path.strip_prefix(b"/minimal/users/") {
                    parse_u64(id).map(Route::MinimalUser)
                } else {
                    None
                }
            }
        }
    }

    /// The one method the route answers (also its `Allow` on a 405).
    pub fn method(self) -> &'static str {
        match self {
            Route::Hello | Route::Json | Route::User(_) => "GET",
            Route::Users | Route::MinimalUser(_) => "POST",
        }
    }

    /// Whether the route binds a JSON body.
    pub fn reads_body(self) -> bool {
        matches!(self, Route::Users | Route::MinimalUser(_))
    }

    /// Serves the route: its status, content type and body (into `scratch`
    /// when it is built now). `body` is the request body of a route that
    /// reads one, already checked for size and `Content-Type`.
    pub fn serve<'s>(
        self,
        body: &[u8],
        scratch: &'s mut Vec<u8>,
    ) -> (Status, &'static str, &'s [u8]) {
        scratch.clear();
        match self {
            Route::Hello => return (Status::Ok, TEXT, HELLO),
            Route::Json => Message {
                message: "Hello, World!",
            }
            .write_json(scratch),
            Route::User(id) => Id { id }.write_json(scratch),
            Route::Users => match User::bind(body) {
                Ok(user) => user.write_json(None, scratch),
                Err(json::Invalid) => return (Status::BadRequest, TEXT, BAD_REQUEST),
            },
            Route::MinimalUser(id) => match User::bind(body) {
                Ok(user) => user.write_json(Some(id), scratch),
                Err(json::Invalid) => return (Status::BadRequest, TEXT, BAD_REQUEST),
            },
        }
        (Status::Ok, JSON, scratch)
    }
}

/// The `json` workload's value.
struct Message {
    message: &'static str,
}

impl Message {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut o = Object::new(out);
        o.str("message", self.message);
        o.end();
    }
}

/// The `route` workload's value.
struct Id {
    id: u64,
}

impl Id {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut o = Object::new(out);
        o.u64("id", self.id);
        o.end();
    }
}

/// The post-json record. `name` borrows from the body unless it held escapes.
#[derive(Debug, PartialEq, Eq)]
pub struct User<'a> {
    pub name: Cow<'a, str>,
    pub age: u64,
    pub adult: bool,
}

impl<'a> User<'a> {
    /// Binds a body: an object with exactly one each of `name` (string),
    /// `age` (unsigned integer within u64) and `adult` (boolean); other
    /// members are checked and ignored; a known member twice is refused.
    pub fn bind(body: &'a [u8]) -> json::Result<Self> {
        let mut r = Reader::new(body)?;
        let (mut name, mut age, mut adult) = (None, None, None);
        r.begin_object()?;
        while let Some(key) = r.next_key()? {
            match &*key {
                "name" => once(&mut name, r.string()?)?,
                "age" => once(&mut age, r.u64()?)?,
                "adult" => once(&mut adult, r.bool()?)?,
                _ => r.skip_value()?,
            }
        }
        r.end()?;
        match (name, age, adult) {
            (Some(name), Some(age), Some(adult)) => Ok(User { name, age, adult }),
            _ => Err(json::Invalid),
        }
    }

    /// The record, with the routed `id` first for the `minimal` workload.
    fn write_json(&self, id: Option<u64>, out: &mut Vec<u8>) {
        let mut o = Object::new(out);
        if let Some(id) = id {
            o.u64("id", id);
        }
        o.str("name", &self.name)
            .u64("age", self.age)
            .bool("adult", self.adult);
        o.end();
    }
}

/// Sets a field that must appear only once.
fn once<T>(slot: &mut Option<T>, value: T) -> json::Result<()> {
    if slot.is_some() {
        return Err(json::Invalid);
    }
    *slot = Some(value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bind(s: &[u8]) -> Option<(String, u64, bool)> {
        User::bind(s)
            .ok()
            .map(|u| (u.name.into_owned(), u.age, u.adult))
    }

    #[test]
    fn binding() {
        let alice = Some(("Alice".to_string(), 28, true));
        assert_eq!(bind(br#"{"name":"Alice","age":28,"adult":true}"#), alice);
        assert_eq!(
            bind(br#" { "adult" : true , "x": {"y": [1, -2.5e3, null]}, "age": 28, "na\u006de": "Alice" } "#),
            alice
        );
        for bad in [
            &br#"{"name":"Alice","age":28}"#[..],
            br#"{"name":"Alice","age":28,"adult":true,"age":28}"#,
            br#"{"name":"Alice","age":28.0,"adult":true}"#,
            br#"{"name":"Alice","age":-1,"adult":true}"#,
            br#"{"name":"Alice","age":2e1,"adult":true}"#,
            br#"{"name":"Alice","age":"28","adult":true}"#,
            br#"{"name":null,"age":28,"adult":true}"#,
            br#"{"name":"Alice","age":28,"adult":1}"#,
            br#"{"name":"Alice","age":18446744073709551616,"adult":true}"#,
            br#"{"NAME":"Alice","age":28,"adult":true}"#,
            br#"{"name":"\ud800","age":28,"adult":true}"#,
            b"{\"name\":\"Alice\",\"age\":28,\"adult\":true,\"x\":\"\xff\"}",
            br#"{"name":"Alice","age":28,"adult":true} x"#,
            br#"[{"name":"Alice","age":28,"adult":true}]"#,
            b"",
        ] {
            assert_eq!(bind(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn routes() {
        assert!(matches!(Route::of(b"/users/42"), Some(Route::User(42))));
        assert!(matches!(
            Route::of(b"/minimal/users/18446744073709551615"),
            Some(Route::MinimalUser(u64::MAX))
        ));
        for none in [
            &b"/users/"[..],
            b"/users/abc",
            b"/users/42/x",
            b"/users/+42",
            b"/users/18446744073709551616",
            b"/minimal/users/",
            b"/minimal/users/1/x",
            b"/minimal/users",
            b"/jsonx",
        ] {
            assert!(Route::of(none).is_none());
        }
        let mut scratch = Vec::new();
        let (_, ct, body) = Route::MinimalUser(42).serve(br#"{"name":"A","age":1,"adult":false}"#, &mut scratch);
        assert_eq!(ct, JSON);
        assert_eq!(body, br#"{"id":42,"name":"A","age":1,"adult":false}"#);
    }
}
