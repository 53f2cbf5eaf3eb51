//! A small strict JSON reader for the weights file's header (RFC 8259: objects, arrays,
//! strings with every escape, numbers, `true`, `false`, `null`), and typed reads of an
//! object's fields with serde's rules for the header (`deny_unknown_fields`, duplicate fields
//! refused, `null` for a missing optional field).
//!
//! The header was read with serde_json; this reader accepts and refuses the same headers
//! (tests below, and every header the tests write), but is written for this one use, so the
//! first view's wasm, whose only JSON is the model's header, carries no serde_json
//! (docs/PERFORMANCE.md, "Size of each build"). Messages name the field or the byte offset.
//!
//! One difference: a number's text is checked against JSON's grammar but not converted, so
//! one too large for an `f64` (`1e400`, which serde_json refuses) passes where the header
//! takes any value: `info`, which the wasm builds skip (natively serde_json reads `info` and
//! refuses it as before). Every typed field takes integers only, read exactly.

/// A JSON value. Numbers keep their text (the header's are integers, read exactly).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Json<'a> {
    Null,
    Bool(bool),
    Number(&'a str),
    String(String),
    Array(Vec<Json<'a>>),
    Object(Vec<Member<'a>>),
}

/// One member of an object: its key, its value and the value's text as written.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Member<'a> {
    pub key: String,
    pub value: Json<'a>,
    pub text: &'a str,
}

/// How deep arrays and objects may nest: 127 levels, serde_json's limit.
const MAX_DEPTH: usize = 127;

/// Parses `text` as one JSON value (whitespace around it, nothing after it).
pub(super) fn parse(text: &str) -> Result<Json<'_>, String> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        at: 0,
        depth: 0,
    };
    p.skip_whitespace();
    let value = p.value()?;
    p.skip_whitespace();
    if p.at != p.bytes.len() {
        return Err(p.error("trailing characters"));
    }
    Ok(value)
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn error(&self, what: &str) -> String {
        format!("{what} at byte {}", self.at)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), String> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(what))
        }
    }

    fn literal(&mut self, word: &str, value: Json<'a>) -> Result<Json<'a>, String> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error("expected a value"))
        }
    }

    fn value(&mut self) -> Result<Json<'a>, String> {
        match self.peek() {
            None => Err(self.error("EOF while parsing a value")),
            Some(b'n') => self.literal("null", Json::Null),
            Some(b't') => self.literal("true", Json::Bool(true)),
            Some(b'f') => self.literal("false", Json::Bool(false)),
            Some(b'"') => Ok(Json::String(self.string()?)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'[') => self.nested(Self::array),
            Some(b'{') => self.nested(Self::object),
            Some(_) => Err(self.error("expected a value")),
        }
    }

    fn nested(
        &mut self,
        read: fn(&mut Self) -> Result<Json<'a>, String>,
    ) -> Result<Json<'a>, String> {
        if self.depth == MAX_DEPTH {
            return Err(self.error("recursion limit exceeded"));
        }
        self.depth += 1;
        let value = read(self);
        self.depth -= 1;
        value
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Result<Json<'a>, String> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.error("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(self.error("invalid number"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("invalid number"));
            }
        }
        Ok(Json::Number(&self.text[start..self.at]))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let hex = self
            .bytes
            .get(self.at..self.at + 4)
            .ok_or_else(|| self.error("EOF while parsing a string"))?;
        let mut n = 0;
        for &h in hex {
            let d = (h as char)
                .to_digit(16)
                .ok_or_else(|| self.error("invalid escape"))?;
            n = n * 16 + d;
        }
        self.at += 4;
        Ok(n)
    }

    fn string(&mut self) -> Result<String, String> {
        self.at += 1; // the opening quote
        let mut out = String::new();
        loop {
            let start = self.at;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.at += 1;
            }
            // The text is UTF-8 and a quote, a backslash or a control byte is never inside a
            // multi-byte character, so this slice is on character boundaries.
            out.push_str(&self.text[start..self.at]);
            match self.peek() {
                None => return Err(self.error("EOF while parsing a string")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    let escape = self
                        .peek()
                        .ok_or_else(|| self.error("EOF while parsing a string"))?;
                    self.at += 1;
                    match escape {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let mut c = self.hex4()?;
                            if (0xD800..0xDC00).contains(&c) {
                                if !self.bytes[self.at..].starts_with(b"\\u") {
                                    return Err(self.error("lone leading surrogate in hex escape"));
                                }
                                self.at += 2;
                                let low = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&low) {
                                    return Err(self.error("invalid surrogate pair in hex escape"));
                                }
                                c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
                            }
                            out.push(char::from_u32(c).ok_or_else(|| {
                                self.error("lone trailing surrogate in hex escape")
                            })?);
                        }
                        _ => return Err(self.error("invalid escape")),
                    }
                }
                Some(_) => {
                    return Err(self
                        .error("control character (\\u0000-\\u001F) found while parsing a string"))
                }
            }
        }
    }

    fn array(&mut self) -> Result<Json<'a>, String> {
        self.at += 1;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Json::Array(items));
        }
        loop {
            self.skip_whitespace();
            items.push(self.value()?);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Json::Array(items));
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    fn object(&mut self) -> Result<Json<'a>, String> {
        self.at += 1;
        let mut members = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Json::Object(members));
        }
        loop {
            self.skip_whitespace();
            if self.peek() != Some(b'"') {
                return Err(self.error("key must be a string"));
            }
            let key = self.string()?;
            self.skip_whitespace();
            self.expect(b':', "expected `:`")?;
            self.skip_whitespace();
            let start = self.at;
            let value = self.value()?;
            let text = &self.text[start..self.at];
            members.push(Member { key, value, text });
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Json::Object(members));
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }
}

/// The fields of an object, read one by one by name; [`Fields::finish`] refuses any left.
pub(super) struct Fields<'j, 'a> {
    members: Vec<Option<&'j Member<'a>>>,
}

impl<'j, 'a> Fields<'j, 'a> {
    /// The members of `value`, an object; a key given twice is an error, as with serde.
    pub(super) fn of(value: &'j Json<'a>, what: &str) -> Result<Self, String> {
        let Json::Object(members) = value else {
            return Err(format!("{what}: expected an object"));
        };
        for (i, m) in members.iter().enumerate() {
            if members[..i].iter().any(|n| n.key == m.key) {
                return Err(format!("duplicate field `{}`", m.key));
            }
        }
        Ok(Fields {
            members: members.iter().map(Some).collect(),
        })
    }

    /// The member named `key`, taken out (`None` when absent).
    pub(super) fn take(&mut self, key: &str) -> Option<&'j Member<'a>> {
        self.members
            .iter_mut()
            .find(|m| m.is_some_and(|m| m.key == key))
            .and_then(Option::take)
    }

    /// The value of a field that must be there.
    pub(super) fn required(&mut self, key: &str) -> Result<&'j Json<'a>, String> {
        self.take(key)
            .map(|m| &m.value)
            .ok_or_else(|| format!("missing field `{key}`"))
    }

    /// The value of a field that may be absent or `null`.
    pub(super) fn optional(&mut self, key: &str) -> Option<&'j Json<'a>> {
        self.take(key)
            .map(|m| &m.value)
            .filter(|v| **v != Json::Null)
    }

    /// Refuses the fields not taken (`deny_unknown_fields`).
    pub(super) fn finish(self) -> Result<(), String> {
        match self.members.into_iter().flatten().next() {
            Some(m) => Err(format!("unknown field `{}`", m.key)),
            None => Ok(()),
        }
    }
}

impl Json<'_> {
    /// The string, or an error naming `field`.
    pub(super) fn str(&self, field: &str) -> Result<&str, String> {
        match self {
            Json::String(s) => Ok(s),
            _ => Err(format!("{field}: expected a string")),
        }
    }

    /// The items of an array, or an error naming `field`.
    pub(super) fn array(&self, field: &str) -> Result<&[Self], String> {
        match self {
            Json::Array(items) => Ok(items),
            _ => Err(format!("{field}: expected an array")),
        }
    }

    /// Every item of an array of strings.
    pub(super) fn strings(&self, field: &str) -> Result<Vec<String>, String> {
        self.array(field)?
            .iter()
            .map(|s| s.str(field).map(str::to_string))
            .collect()
    }

    /// A boolean, or an error naming `field`.
    pub(super) fn boolean(&self, field: &str) -> Result<bool, String> {
        match self {
            Json::Bool(b) => Ok(*b),
            _ => Err(format!("{field}: expected true or false")),
        }
    }

    /// A number as the nearest `f64` (Rust's correctly rounded parse of its text, the same on
    /// every target), which must be finite.
    pub(super) fn float(&self, field: &str) -> Result<f64, String> {
        let Json::Number(text) = self else {
            return Err(format!("{field}: expected a number"));
        };
        text.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("{field}: {text} is not a finite number"))
    }

    /// An integer written without fraction or exponent that fits `T` (as serde reads one).
    pub(super) fn int<T: TryFrom<i128>>(&self, field: &str) -> Result<T, String> {
        let bad = || format!("{field}: expected an integer in range");
        let Json::Number(text) = self else {
            return Err(format!("{field}: expected an integer"));
        };
        let (negative, digits) = match text.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, *text),
        };
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("{field}: expected an integer"));
        }
        // Past u64 serde_json reads a number as a float, which no integer field takes.
        // So is `-0`, and a negative number below `i64::MIN`.
        let magnitude: u64 = digits.parse().map_err(|_| bad())?;
        let value = if negative {
            if magnitude == 0 || magnitude > 1 << 63 {
                return Err(bad());
            }
            -i128::from(magnitude)
        } else {
            i128::from(magnitude)
        };
        T::try_from(value).map_err(|_| bad())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What serde_json says of the same text: accepted (as the same value) or refused.
    fn same_as_serde_json(text: &str) {
        let ours = parse(text);
        let theirs = serde_json::from_str::<serde_json::Value>(text);
        assert_eq!(
            ours.is_ok(),
            theirs.is_ok(),
            "{text:?}: {ours:?} vs {theirs:?}"
        );
        if let (Ok(ours), Ok(theirs)) = (ours, theirs) {
            assert_eq!(to_serde(&ours), theirs, "{text:?}");
        }
    }

    fn to_serde(v: &Json) -> serde_json::Value {
        match v {
            Json::Null => serde_json::Value::Null,
            Json::Bool(b) => (*b).into(),
            Json::Number(n) => serde_json::from_str(n).unwrap(),
            Json::String(s) => s.clone().into(),
            Json::Array(a) => a.iter().map(to_serde).collect(),
            Json::Object(m) => serde_json::Value::Object(
                m.iter()
                    .map(|m| (m.key.clone(), to_serde(&m.value)))
                    .collect(),
            ),
        }
    }

    #[test]
    fn accepts_and_refuses_what_serde_json_does() {
        for text in [
            "{}",
            "[]",
            " { \"a\" : [1, -2, 3.5e-3, 0, -0, 1E+2, true, false, null] } ",
            r#"{"s": "a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00 中文 🙂"}"#,
            r#"{"a": {"b": {"c": []}}}"#,
            "",
            " ",
            "{",
            "{\"a\"}",
            "{\"a\":}",
            "{\"a\":1,}",
            "[1,]",
            "[1 2]",
            "{a:1}",
            "01",
            "-",
            "1.",
            ".5",
            "1e",
            "+1",
            "tru",
            "nul",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\ud800\"",
            "\"\\ud800\\u0041\"",
            "\"\\udc00\"",
            "\"a\u{1}b\"",
            "\"open",
            "{} {}",
            "{}x",
        ] {
            same_as_serde_json(text);
        }
        for depth in [126, 127, 128, 129] {
            same_as_serde_json(&format!("{}{}", "[".repeat(depth), "]".repeat(depth)));
            same_as_serde_json(&format!(
                "{}0{}",
                "{\"a\":".repeat(depth),
                "}".repeat(depth)
            ));
        }
    }

    #[test]
    fn integers_are_read_as_serde_reads_them() {
        let n = |t: &str| Json::Number(Box::leak(t.to_string().into_boxed_str()));
        assert_eq!(n("64").int::<usize>("d"), Ok(64));
        assert_eq!(n("-3").int::<i64>("shift"), Ok(-3));
        assert!(n("-1").int::<usize>("d").is_err());
        assert!(n("64.0").int::<usize>("d").is_err());
        assert!(n("1e2").int::<usize>("d").is_err());
        assert!(n("18446744073709551616").int::<u64>("d").is_err());
        assert!(n("-0").int::<i64>("shift").is_err());
        assert_eq!(n("-9223372036854775808").int::<i64>("shift"), Ok(i64::MIN));
        assert!(n("-9223372036854775809").int::<i64>("shift").is_err());
        assert_eq!(n("4294967295").int::<u32>("depth"), Ok(u32::MAX));
        assert!(n("4294967296").int::<u32>("depth").is_err());
        assert!(Json::String("1".into()).int::<usize>("d").is_err());
    }

    #[test]
    fn fields_refuse_duplicates_and_unknown_keys() {
        let v = parse(r#"{"a": 1, "b": null, "c": "x"}"#).unwrap();
        let mut f = Fields::of(&v, "header").unwrap();
        assert_eq!(f.required("a").unwrap().int::<usize>("a"), Ok(1));
        assert!(f.optional("b").is_none());
        assert!(f.required("d").is_err());
        assert_eq!(f.finish(), Err("unknown field `c`".to_string()));
        let v = parse(r#"{"a": 1, "a": 2}"#).unwrap();
        assert!(Fields::of(&v, "header").is_err());
        assert_eq!(
            parse(r#"{"i": {"x": [1, 2]} }"#).map(|v| match v {
                Json::Object(m) => m[0].text,
                _ => "",
            }),
            Ok(r#"{"x": [1, 2]}"#)
        );
    }
}
