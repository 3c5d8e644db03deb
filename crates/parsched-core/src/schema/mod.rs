//! One declarative schema per model configuration.
//!
//! A model's configuration keys are described once, as a static table of
//! [`Field`]s: the key (a paper symbol such as `L` or an option name), its
//! [`Kind`] (bool, integer with a range, float with a range whose ends are
//! open or closed, a choice among names, a list of numbers, a list of names,
//! text), its unit,
//! the paper's symbol and section, a one-line doc, and a getter / setter pair.
//! Everything else is derived from the table by a [`Schema`]:
//!
//! * [`Schema::set`] — `set(key, value)` of the configuration: finds the key,
//!   converts the user's [`Value`] by the key's kind (type errors name the key
//!   and what is allowed) and stores it;
//! * [`Schema::check`] — the per-key range checks a configuration's
//!   `validate` runs before its cross-field checks;
//! * [`Schema::keys`] — the accepted keys, in documentation order;
//! * [`Schema::describe`] — a serialisable description of every key with its
//!   default (read from a default configuration through the getter), which
//!   the Python bindings export and from which the Python config classes, the
//!   command line's key lists and the key tables of
//!   `docs/formats/config-toml.md` are built.
//!
//! The getter / setter pairs are plain function pointers written by the
//! [`field!`](crate::field) macro from a field path (`overheads.p0`) and its
//! Rust type (`bool`, `u32`, `u64`, `f64`, `choice`, `list`, `text`, or an
//! `Option` of a number or text): a table, not a derive, so that one struct
//! field can appear under a paper symbol and nested structs need no
//! attributes. Choice enums get their names from one place, the
//! [`choices!`](crate::choices) macro, which implements [`Choice`] (`NAMES`,
//! `name`, `parse`).
//!
//! A field may add, by const builder methods: its own wording of an
//! out-of-range value ([`Field::worded`], to keep a model's established
//! messages), other spellings of values ([`Field::aliased`], `auto` for
//! unset), case-insensitive choices ([`Field::folded`]), a range checked by
//! `set` too ([`Field::eager`]), or a parser of its own for a key whose text
//! has a grammar ([`Field::parsed`], e.g. a dispatch table; the
//! `custom(GETTER, ...)` form of [`field!`](crate::field)). Cross-field checks
//! (warm-up below jobs, a pool layout that fits P) stay in each
//! configuration's `validate`, after [`Schema::check`].
//!
//! [`Value`] is the one type of a user-given value (TOML, `--set`, a Python
//! dict) for every configuration. This module does no I/O.

use crate::error::{clip, ConfigError, ECHO_MAX};
use serde::Serialize;

mod check;
mod erased;
mod value;
use check::checked;
#[cfg(test)]
use check::outside_msg;
pub use check::{check_value, range_text};
pub use erased::{Configuration, Schematic};
pub use value::{type_err, Value};

/// The largest value of an integer key stored as `u32` (a range's upper end).
pub const U32: u64 = u32::MAX as u64;
/// The largest value of an integer key stored as `u64`.
pub const U64: u64 = u64::MAX;

/// A choice enum: its names (as TOML, `--set` and serde spell them), one
/// place. Implemented by [`choices!`](crate::choices).
pub trait Choice: Sized + Copy + 'static {
    /// Every name, in documentation order.
    const NAMES: &'static [&'static str];
    /// This variant's name.
    fn name(self) -> &'static str;
    /// The variant of a name.
    fn parse(name: &str) -> Option<Self>;
}

/// Implements [`Choice`] for an enum: `choices!(Mode { A => "a", B => "b" });`.
#[macro_export]
macro_rules! choices {
    ($t:ty { $($v:ident => $n:literal),+ $(,)? }) => {
        impl $crate::schema::Choice for $t {
            const NAMES: &'static [&'static str] = &[$($n),+];
            fn name(self) -> &'static str {
                match self { $(Self::$v => $n),+ }
            }
            fn parse(name: &str) -> Option<Self> {
                match name { $($n => Some(Self::$v),)+ _ => None }
            }
        }
    };
}

/// One end of a number range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct End {
    pub value: f64,
    /// Whether `value` itself is allowed.
    pub closed: bool,
}

/// What a key's value is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Kind {
    Bool,
    /// An integer in `min..=max`.
    Int {
        min: u64,
        max: u64,
    },
    /// A finite number between its ends (an absent end: unbounded).
    Float {
        min: Option<End>,
        max: Option<End>,
    },
    /// One of the names.
    Choice {
        choices: &'static [&'static str],
    },
    /// A list of finite numbers, each between the ends.
    List {
        min: Option<End>,
        max: Option<End>,
    },
    /// Rows of finite numbers, each between the ends (text: rows
    /// separated by `;`, numbers by commas; e.g. one row per job).
    Table {
        min: Option<End>,
        max: Option<End>,
    },
    /// A list of names, each one of `choices` (text: names separated by
    /// commas).
    Names {
        choices: &'static [&'static str],
    },
    /// Free text (a path, a list of names).
    Text,
}

impl Kind {
    /// Any integer of the type `max` bounds.
    pub const fn int(max: u64) -> Kind {
        Kind::Int { min: 0, max }
    }
    /// An integer `>= min` of the type `max` bounds.
    pub const fn int_min(min: u64, max: u64) -> Kind {
        Kind::Int { min, max }
    }
    /// Any finite number.
    pub const FLOAT: Kind = Kind::Float {
        min: None,
        max: None,
    };
    /// A finite number `>= 0`.
    pub const NONNEG: Kind = Kind::float_min(0.0, true);
    /// A finite number `> 0`.
    pub const POSITIVE: Kind = Kind::float_min(0.0, false);
    /// A finite number above `min` (`closed`: `min` included).
    pub const fn float_min(min: f64, closed: bool) -> Kind {
        Kind::Float {
            min: Some(End { value: min, closed }),
            max: None,
        }
    }
    /// A finite number between `min` and `max` (ends included when closed).
    pub const fn float_range(min: f64, min_closed: bool, max: f64, max_closed: bool) -> Kind {
        Kind::Float {
            min: Some(End {
                value: min,
                closed: min_closed,
            }),
            max: Some(End {
                value: max,
                closed: max_closed,
            }),
        }
    }
    /// One of `T`'s names.
    pub const fn choice<T: Choice>() -> Kind {
        Kind::Choice { choices: T::NAMES }
    }
}

/// A typed value of a key, as a getter returns it and a setter takes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Typed {
    /// An optional key left unset.
    None,
    Bool(bool),
    Int(u64),
    Float(f64),
    Choice(&'static str),
    List(Vec<f64>),
    Text(String),
    Names(Vec<&'static str>),
    Table(Vec<Vec<f64>>),
}

/// A getter: the key's current value.
pub type Getter<C> = fn(&C) -> Typed;
/// A setter: stores a value of the key's kind; `Err(allowed)` when it does
/// not fit the field's Rust type.
pub type Setter<C> = fn(&mut C, Typed) -> Result<(), &'static str>;

/// A custom setter: parses the user's value itself (a key whose text has
/// a grammar of its own, e.g. a dispatch table); its errors name the key.
pub type Parser<C> = fn(&mut C, &Value) -> Result<(), ConfigError>;

/// One key of a configuration `C`.
pub struct Field<C: 'static> {
    pub key: &'static str,
    pub kind: Kind,
    /// Whether the key may be unset (`None`).
    pub optional: bool,
    /// Unit of the value ("" for none).
    pub unit: &'static str,
    /// The paper's symbol ("" for none).
    pub symbol: &'static str,
    /// Where the paper defines or uses it: section, equation, table ("" for none).
    pub section: &'static str,
    /// One line.
    pub doc: &'static str,
    /// The problem an out-of-range value reports, `{}` standing for the
    /// value ("" for the generic wording, e.g. `5 is outside (0, 1)`).
    pub problem: &'static str,
    /// What an out-of-range value's error says is allowed ("" for the
    /// range itself, e.g. `0 < L < 1`).
    pub allowed: &'static str,
    /// Other spellings a user may give: `(alias, value)`, value `""` for
    /// unset (e.g. `("auto", "")`), else the canonical text.
    pub aliases: &'static [(&'static str, &'static str)],
    /// Choices are matched ignoring case, with `_` and `-` the same.
    pub fold: bool,
    pub get: Getter<C>,
    pub put: Setter<C>,
    /// A custom setter, used instead of converting by the kind and `put`.
    pub parse: Option<Parser<C>>,
    /// `set` refuses a value outside the range at once (else only `check`).
    pub eager: bool,
}

impl<C> Clone for Field<C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C> Copy for Field<C> {}

impl<C> Field<C> {
    /// The field with its own wording of an out-of-range value: `problem`
    /// (`{}` stands for the value) and `allowed`.
    pub const fn worded(self, problem: &'static str, allowed: &'static str) -> Self {
        Field {
            problem,
            allowed,
            ..self
        }
    }

    /// The field with other spellings of its values (`(alias, value)`,
    /// value `""` for unset).
    pub const fn aliased(self, aliases: &'static [(&'static str, &'static str)]) -> Self {
        Field { aliases, ..self }
    }

    /// The field with its range checked by `set` too, before the value is
    /// stored.
    pub const fn eager(self) -> Self {
        Field {
            eager: true,
            ..self
        }
    }

    /// The field with its choices matched ignoring case, `_` = `-`.
    pub const fn folded(self) -> Self {
        Field { fold: true, ..self }
    }

    /// The field with a custom setter (its own grammar of the user's value).
    pub const fn parsed(self, parse: Parser<C>) -> Self {
        Field {
            parse: Some(parse),
            ..self
        }
    }
}

/// The serialisable description of one key (exported to Python).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyInfo {
    pub key: &'static str,
    #[serde(flatten)]
    pub kind: Kind,
    pub optional: bool,
    pub unit: &'static str,
    pub symbol: &'static str,
    pub section: &'static str,
    pub doc: &'static str,
    pub default: Typed,
    /// Other spellings: `(alias, value)`, value `""` for unset.
    pub aliases: &'static [(&'static str, &'static str)],
    /// Choices are matched ignoring case, with `_` and `-` the same.
    pub fold: bool,
}

/// A model's keys.
pub struct Schema<C: 'static> {
    /// The model's name (`pools`, `barrier`, ...).
    pub model: &'static str,
    pub fields: &'static [Field<C>],
}

impl<C> Schema<C> {
    /// Every key, in documentation order.
    pub fn keys(&self) -> Vec<&'static str> {
        self.fields.iter().map(|f| f.key).collect()
    }

    /// The field of `key`.
    pub fn field(&self, key: &str) -> Option<&'static Field<C>> {
        self.fields.iter().find(|f| f.key == key)
    }

    /// The error of a key that is not in the schema.
    pub fn unknown(&self, key: &str) -> ConfigError {
        ConfigError::new(key, "unknown key", self.keys().join(", "))
    }

    /// Sets `key` of `cfg` to `v`, converted by the key's kind. Ranges are
    /// checked by [`Schema::check`], not here.
    pub fn set(&self, cfg: &mut C, key: &str, v: &Value) -> Result<(), ConfigError> {
        let f = self.field(key).ok_or_else(|| self.unknown(key))?;
        if let Some(parse) = f.parse {
            return parse(cfg, v);
        }
        let typed = typed_of(f, key, v)?;
        if f.eager {
            checked(f, &typed)?;
        }
        (f.put)(cfg, typed).map_err(|allowed| type_err(key, v, allowed))
    }

    /// The value of `key` in `cfg`.
    pub fn get(&self, cfg: &C, key: &str) -> Option<Typed> {
        self.field(key).map(|f| (f.get)(cfg))
    }

    /// Checks every key's value against its range.
    pub fn check(&self, cfg: &C) -> Result<(), ConfigError> {
        for f in self.fields {
            checked(f, &(f.get)(cfg))?;
        }
        Ok(())
    }

    /// Every key with its default (its value in `defaults`).
    pub fn describe(&self, defaults: &C) -> Vec<KeyInfo> {
        self.fields
            .iter()
            .map(|f| KeyInfo {
                key: f.key,
                kind: f.kind,
                optional: f.optional,
                unit: f.unit,
                symbol: f.symbol,
                section: f.section,
                doc: f.doc,
                default: (f.get)(defaults),
                aliases: f.aliases,
                fold: f.fold,
            })
            .collect()
    }
}

fn typed_of<C>(f: &Field<C>, key: &str, v: &Value) -> Result<Typed, ConfigError> {
    let canonical;
    let v = match v {
        Value::Str(s) => match f.aliases.iter().find(|(a, _)| *a == s.trim()) {
            Some((_, "")) if f.optional => return Ok(Typed::None),
            Some((_, c)) => {
                canonical = Value::Str(c.to_string());
                &canonical
            }
            None => v,
        },
        _ => v,
    };
    if f.optional {
        if let Value::Str(s) = v {
            if matches!(s.trim(), "" | "none" | "None" | "null") {
                return Ok(Typed::None);
            }
        }
    }
    Ok(match f.kind {
        Kind::Bool => Typed::Bool(v.as_bool(key)?),
        // the Rust type's width is the setter's; the range is `check`'s
        Kind::Int { .. } => Typed::Int(v.as_u64(key)?),
        Kind::Float { .. } => Typed::Float(v.as_f64(key)?),
        Kind::Choice { choices } => {
            let found = match v {
                Value::Str(s) => choices.iter().find(|c| {
                    if f.fold {
                        folded(c) == folded(s)
                    } else {
                        **c == s.as_str()
                    }
                }),
                _ => None,
            };
            Typed::Choice(found.ok_or_else(|| type_err(key, v, &choices.join("|")))?)
        }
        Kind::Names { choices } => {
            let Value::Str(s) = v else {
                return Err(type_err(key, v, "names separated by commas"));
            };
            let mut names = Vec::new();
            for t in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                let name = choices
                    .iter()
                    .find(|c| folded(c) == folded(t))
                    .ok_or_else(|| {
                        ConfigError::new(
                            key,
                            format!("{:?} is not a name", clip(t, ECHO_MAX)),
                            choices.join(", "),
                        )
                    })?;
                names.push(*name);
            }
            Typed::Names(names)
        }
        Kind::List { .. } => Typed::List(v.as_f64_list(key)?),
        Kind::Table { .. } => Typed::Table(v.as_rows(key)?),
        Kind::Text => match v {
            Value::Str(s) => Typed::Text(s.clone()),
            _ => return Err(type_err(key, v, "text")),
        },
    })
}

/// A name as fold-matched: upper case, `_` as `-`.
fn folded(s: &str) -> String {
    s.trim().to_ascii_uppercase().replace('_', "-")
}

/// Builds a [`Field`] of configuration `$C`: key, field path and Rust type,
/// kind, unit, the paper's symbol, its section (or equation, table), doc.
///
/// Types: `bool`, `u8`, `u32`, `u64`, `f64`, `choice` (a [`Choice`] enum), `list`
/// (`Vec<f64>`), `text` (`String`), `names` (`Vec<&'static str>`), `opt_u32`, `opt_f64`, `opt_text`
/// (`Option`s: the key may be unset). `custom(GETTER, optional = BOOL)`
/// instead of a field path: a key read by its own parser
/// ([`Field::parsed`]) and shown by `GETTER`.
#[macro_export]
macro_rules! field {
    ($C:ty, $key:literal, custom($get:expr, optional = $opt:literal), $kind:expr, $unit:literal,
     $symbol:literal, $section:literal, $doc:literal $(,)?) => {
        $crate::schema::Field::<$C> {
            key: $key,
            kind: $kind,
            optional: $opt,
            unit: $unit,
            symbol: $symbol,
            section: $section,
            doc: $doc,
            problem: "",
            allowed: "",
            aliases: &[],
            fold: false,
            parse: None,
            eager: false,
            get: $get,
            put: |_: &mut $C, _: $crate::schema::Typed| Err("a value of the key's own grammar"),
        }
    };
    ($C:ty, $key:literal, $($f:ident).+ : $t:ident, $kind:expr, $unit:literal, $symbol:literal,
     $section:literal, $doc:literal $(,)?) => {
        $crate::schema::Field::<$C> {
            key: $key,
            kind: $kind,
            optional: $crate::field!(@opt $t),
            unit: $unit,
            symbol: $symbol,
            section: $section,
            doc: $doc,
            problem: "",
            allowed: "",
            aliases: &[],
            fold: false,
            parse: None,
            eager: false,
            get: |c: &$C| $crate::field!(@get $t, c.$($f).+),
            put: |c: &mut $C, v: $crate::schema::Typed| {
                c.$($f).+ = $crate::field!(@put $t, v);
                Ok(())
            },
        }
    };
    (@opt opt_u32) => { true };
    (@opt opt_f64) => { true };
    (@opt opt_text) => { true };
    (@opt $t:ident) => { false };
    (@get bool, $e:expr) => { $crate::schema::Typed::Bool($e) };
    (@get u32, $e:expr) => { $crate::schema::Typed::Int($e as u64) };
    (@get u8, $e:expr) => { $crate::schema::Typed::Int($e as u64) };
    (@get u64, $e:expr) => { $crate::schema::Typed::Int($e) };
    (@get f64, $e:expr) => { $crate::schema::Typed::Float($e) };
    (@get choice, $e:expr) => { $crate::schema::Typed::Choice($crate::schema::Choice::name($e)) };
    (@get list, $e:expr) => { $crate::schema::Typed::List($e.clone()) };
    (@get text, $e:expr) => { $crate::schema::Typed::Text($e.clone()) };
    (@get names, $e:expr) => { $crate::schema::Typed::Names($e.clone()) };
    (@get table, $e:expr) => { $crate::schema::Typed::Table($e.clone()) };
    (@get opt_u32, $e:expr) => {
        $e.map_or($crate::schema::Typed::None, |x| $crate::schema::Typed::Int(x as u64))
    };
    (@get opt_f64, $e:expr) => {
        $e.map_or($crate::schema::Typed::None, $crate::schema::Typed::Float)
    };
    (@get opt_text, $e:expr) => {
        $e.clone().map_or($crate::schema::Typed::None, $crate::schema::Typed::Text)
    };
    (@put bool, $v:expr) => { $v.bool()? };
    (@put u32, $v:expr) => { $v.u32()? };
    (@put u8, $v:expr) => { u8::try_from($v.u64()?).map_err(|_| "an integer below 256")? };
    (@put u64, $v:expr) => { $v.u64()? };
    (@put f64, $v:expr) => { $v.f64()? };
    (@put choice, $v:expr) => { $v.choice()? };
    (@put list, $v:expr) => { $v.list()? };
    (@put text, $v:expr) => { $v.text()? };
    (@put names, $v:expr) => { $v.names()? };
    (@put table, $v:expr) => { $v.table()? };
    (@put opt_u32, $v:expr) => { $v.opt(|v| v.u32())? };
    (@put opt_f64, $v:expr) => { $v.opt(|v| v.f64())? };
    (@put opt_text, $v:expr) => { $v.opt(|v| v.text())? };
}

const MISMATCH: &str = "a value of the key's type";

impl Typed {
    /// A boolean.
    pub fn bool(self) -> Result<bool, &'static str> {
        match self {
            Typed::Bool(b) => Ok(b),
            _ => Err(MISMATCH),
        }
    }
    /// An integer below 2^32.
    pub fn u32(self) -> Result<u32, &'static str> {
        u32::try_from(self.u64()?).map_err(|_| "an integer below 2^32")
    }
    /// A non-negative integer.
    pub fn u64(self) -> Result<u64, &'static str> {
        match self {
            Typed::Int(i) => Ok(i),
            _ => Err(MISMATCH),
        }
    }
    /// A number.
    pub fn f64(self) -> Result<f64, &'static str> {
        match self {
            Typed::Float(x) => Ok(x),
            Typed::Int(i) => Ok(i as f64),
            _ => Err(MISMATCH),
        }
    }
    /// A variant of a choice enum.
    pub fn choice<T: Choice>(self) -> Result<T, &'static str> {
        match self {
            Typed::Choice(n) => T::parse(n).ok_or(MISMATCH),
            _ => Err(MISMATCH),
        }
    }
    /// A list of names.
    pub fn names(self) -> Result<Vec<&'static str>, &'static str> {
        match self {
            Typed::Names(v) => Ok(v),
            _ => Err(MISMATCH),
        }
    }
    /// A list of numbers.
    pub fn list(self) -> Result<Vec<f64>, &'static str> {
        match self {
            Typed::List(v) => Ok(v),
            _ => Err(MISMATCH),
        }
    }

    /// The rows of a table.
    pub fn table(self) -> Result<Vec<Vec<f64>>, &'static str> {
        match self {
            Typed::Table(v) => Ok(v),
            _ => Err(MISMATCH),
        }
    }
    /// Text.
    pub fn text(self) -> Result<String, &'static str> {
        match self {
            Typed::Text(s) => Ok(s),
            _ => Err(MISMATCH),
        }
    }
    /// `None` when unset, else the value converted by `f`.
    pub fn opt<T>(
        self,
        f: impl FnOnce(Typed) -> Result<T, &'static str>,
    ) -> Result<Option<T>, &'static str> {
        match self {
            Typed::None => Ok(None),
            v => f(v).map(Some),
        }
    }
}

impl Kind {
    /// The range ends of a number kind (`None`s for others).
    pub fn ends(&self) -> (Option<End>, Option<End>) {
        match *self {
            Kind::Float { min, max } | Kind::List { min, max } => (min, max),
            _ => (None, None),
        }
    }
}

// The core's own choice enums (their names are their serde names; a test
// checks).
choices!(crate::policy::pools::Rounding {
    Nearest => "nearest",
    Floor => "floor",
    Ceil => "ceil",
});
choices!(crate::policy::wait::WaitStrategy {
    Busy => "busy",
    Block => "block",
    TwoPhase => "twophase",
    Yield => "yield",
});
choices!(crate::policy::ts::TsSemantics {
    Parsched => "parsched",
    Solaris => "solaris",
});
choices!(crate::policy::local::Wakeup {
    Tail => "tail",
    Priority => "priority",
});
choices!(crate::policy::gang::SlotAllocation {
    FirstFit => "first_fit",
    BestFit => "best_fit",
});
impl Choice for crate::policy::cosched::CoschedScheme {
    const NAMES: &'static [&'static str] = &crate::policy::cosched::SCHEME_NAMES;
    fn name(self) -> &'static str {
        crate::policy::cosched::CoschedScheme::name(self)
    }
    fn parse(name: &str) -> Option<Self> {
        name.parse().ok()
    }
}
choices!(crate::policy::fcs::FRows {
    Shared => "shared",
    Own => "own",
});
choices!(crate::policy::fcs::Fill {
    FDc => "f_dc",
    Dc => "dc",
});
choices!(crate::program::Pattern {
    UniformRandom => "uniform_random",
    Sequential => "sequential",
});
choices!(crate::policy::pools::TieBreak {
    LowestIndex => "lowest_index",
    MostIdle => "most_idle",
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::local::Wakeup;
    use crate::policy::pools::{Rounding, TieBreak};
    use crate::policy::wait::WaitStrategy;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Mode {
        Fast,
        Slow,
    }
    choices!(Mode {
        Fast => "fast",
        Slow => "slow",
    });

    #[derive(Debug, Clone, PartialEq)]
    struct Inner {
        n: u32,
    }
    #[derive(Debug, Clone, PartialEq)]
    struct Cfg {
        load: f64,
        inner: Inner,
        big: u64,
        on: bool,
        mode: Mode,
        xs: Vec<f64>,
        width: Option<u32>,
    }
    impl Default for Cfg {
        fn default() -> Self {
            Cfg {
                load: 0.5,
                inner: Inner { n: 3 },
                big: 7,
                on: false,
                mode: Mode::Slow,
                xs: vec![1.0],
                width: None,
            }
        }
    }
    static FIELDS: &[Field<Cfg>] = &[
        field!(Cfg, "L", load: f64, Kind::float_range(0.0, false, 1.0, false), "", "L",
            "Table 2", "load"),
        field!(Cfg, "n", inner.n: u32, Kind::int_min(1, u32::MAX as u64), "", "", "", "count"),
        field!(Cfg, "big", big: u64, Kind::int(u64::MAX), "", "", "", "a big one"),
        field!(Cfg, "on", on: bool, Kind::Bool, "", "", "", "switch"),
        field!(Cfg, "mode", mode: choice, Kind::choice::<Mode>(), "", "", "", "mode")
            .aliased(&[("quick", "fast")]),
        field!(Cfg, "xs", xs: list, Kind::List { min: Some(End { value: 0.0, closed: true }),
            max: None }, "ms", "", "", "samples"),
        field!(Cfg, "width", width: opt_u32, Kind::int_min(1, u32::MAX as u64), "", "", "", "w")
            .aliased(&[("auto", "")]),
    ];
    static WORDED: &[Field<Cfg>] = &[field!(Cfg, "n", inner.n: u32,
        Kind::int_min(1, u32::MAX as u64), "", "", "", "count")
    .worded("a gang of {} threads", "n >= 1")];
    static SCHEMA: Schema<Cfg> = Schema {
        model: "test",
        fields: FIELDS,
    };

    #[test]
    fn set_converts_by_kind_and_names_the_key() {
        let mut c = Cfg::default();
        SCHEMA.set(&mut c, "L", &Value::Str("0.25".into())).unwrap();
        SCHEMA.set(&mut c, "n", &Value::Int(9)).unwrap();
        SCHEMA
            .set(&mut c, "on", &Value::Str("true".into()))
            .unwrap();
        SCHEMA
            .set(&mut c, "mode", &Value::Str("fast".into()))
            .unwrap();
        SCHEMA
            .set(&mut c, "xs", &Value::Str("1, 2 3".into()))
            .unwrap();
        SCHEMA.set(&mut c, "width", &Value::Int(4)).unwrap();
        assert_eq!(
            (c.load, c.inner.n, c.on, c.mode),
            (0.25, 9, true, Mode::Fast)
        );
        assert_eq!((c.xs.clone(), c.width), (vec![1.0, 2.0, 3.0], Some(4)));
        SCHEMA
            .set(&mut c, "width", &Value::Str("none".into()))
            .unwrap();
        assert_eq!(c.width, None);
        SCHEMA.set(&mut c, "width", &Value::Int(4)).unwrap();
        SCHEMA
            .set(&mut c, "width", &Value::Str("auto".into()))
            .unwrap();
        assert_eq!(c.width, None, "an alias of unset");
        SCHEMA
            .set(&mut c, "mode", &Value::Str("quick".into()))
            .unwrap();
        assert_eq!(c.mode, Mode::Fast, "an alias of a choice");
        let e = SCHEMA
            .set(&mut c, "mode", &Value::Str("medium".into()))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "mode: \"medium\" is not accepted; allowed: fast|slow"
        );
        let e = SCHEMA.set(&mut c, "n", &Value::Int(1 << 40)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "n: 1099511627776 is not accepted; allowed: an integer below 2^32"
        );
        let e = SCHEMA.set(&mut c, "nope", &Value::Int(1)).unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.message.as_str()),
            ("nope", "unknown key")
        );
        assert_eq!(e.allowed, "L, n, big, on, mode, xs, width");
        assert!(SCHEMA.set(&mut c, "on", &Value::Int(1)).is_err());
        assert!(SCHEMA.set(&mut c, "n", &Value::Float(2.5)).is_err());
    }

    #[derive(Debug, Default)]
    struct Mix {
        mode: Option<Mode>,
        apps: Vec<&'static str>,
        text: String,
    }
    fn set_text(c: &mut Mix, v: &Value) -> Result<(), ConfigError> {
        match v {
            Value::Str(s) if s.starts_with('#') => {
                c.text = s.clone();
                Ok(())
            }
            _ => Err(ConfigError::new("text", "no #", "#...")),
        }
    }
    static MIX: &[Field<Mix>] = &[
        Field {
            key: "mode",
            kind: Kind::choice::<Mode>(),
            optional: false,
            unit: "",
            symbol: "",
            section: "",
            doc: "",
            problem: "",
            allowed: "",
            aliases: &[],
            fold: false,
            get: |c: &Mix| c.mode.map_or(Typed::None, |m| Typed::Choice(m.name())),
            put: |c: &mut Mix, v: Typed| {
                c.mode = Some(v.choice()?);
                Ok(())
            },
            parse: None,
            eager: false,
        }
        .folded(),
        field!(Mix, "apps", apps: names, Kind::Names { choices: &["LIFE3.5", "MG"] }, "", "",
            "", "apps"),
        field!(Mix, "text", text: text, Kind::Text, "", "", "", "custom").parsed(set_text),
    ];

    #[test]
    fn folded_choices_names_and_custom_setters() {
        let schema = Schema {
            model: "mix",
            fields: MIX,
        };
        let mut c = Mix::default();
        schema
            .set(&mut c, "mode", &Value::Str("FAST".into()))
            .unwrap();
        assert_eq!(c.mode, Some(Mode::Fast));
        schema
            .set(&mut c, "apps", &Value::Str("life3.5, mg,".into()))
            .unwrap();
        assert_eq!(c.apps, vec!["LIFE3.5", "MG"]);
        let e = schema
            .set(&mut c, "apps", &Value::Str("EP".into()))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "apps: \"EP\" is not a name; allowed: LIFE3.5, MG"
        );
        schema
            .set(&mut c, "text", &Value::Str("#x".into()))
            .unwrap();
        assert_eq!(c.text, "#x");
        assert_eq!(
            schema
                .set(&mut c, "text", &Value::Int(1))
                .unwrap_err()
                .message,
            "no #"
        );
        assert!(schema.describe(&c)[0].fold);
    }

    #[test]
    fn check_applies_ranges_with_one_line_messages() {
        let mut c = Cfg::default();
        SCHEMA.check(&c).unwrap();
        c.load = 1.0;
        let e = SCHEMA.check(&c).unwrap_err();
        assert_eq!(e.to_string(), "L: 1 is outside (0, 1); allowed: 0 < L < 1");
        c.load = 0.5;
        c.inner.n = 0;
        let e = SCHEMA.check(&c).unwrap_err();
        assert_eq!(e.to_string(), "n: 0 is below 1; allowed: an integer >= 1");
        let worded = Schema {
            model: "worded",
            fields: WORDED,
        };
        let e = worded.check(&c).unwrap_err();
        assert_eq!(e.to_string(), "n: a gang of 0 threads; allowed: n >= 1");
        c.inner.n = 1;
        worded.check(&c).unwrap();
        c.xs = vec![1.0, -2.0];
        let e = SCHEMA.check(&c).unwrap_err();
        assert_eq!(e.field, "xs");
        assert!(e.message.starts_with("value 2: -2 is negative"), "{e}");
        c.xs = vec![f64::NAN];
        assert!(SCHEMA.check(&c).is_err());
        c.xs.clear();
        c.width = Some(0);
        assert_eq!(SCHEMA.check(&c).unwrap_err().field, "width");
    }

    #[test]
    fn range_texts_follow_the_ends() {
        assert_eq!(
            range_text(
                "G",
                Kind::float_range(0.0, true, 1.0, true).ends().0,
                Kind::float_range(0.0, true, 1.0, true).ends().1
            ),
            "0 <= G <= 1"
        );
        let (a, b) = Kind::POSITIVE.ends();
        assert_eq!(range_text("T", a, b), "T > 0");
        let (a, b) = Kind::NONNEG.ends();
        assert_eq!(range_text("F", a, b), "F >= 0");
        assert_eq!(outside_msg(-1.0, a, b), "-1 is negative or not finite");
    }

    #[test]
    fn describe_exports_defaults_and_kinds() {
        let d = SCHEMA.describe(&Cfg::default());
        assert_eq!(d.len(), FIELDS.len());
        assert_eq!(d[0].default, Typed::Float(0.5));
        assert_eq!(d[1].default, Typed::Int(3));
        assert_eq!(d[4].default, Typed::Choice("slow"));
        assert_eq!(d[6].default, Typed::None);
        assert!(d[6].optional && !d[0].optional);
        let text = toml::to_string(&Wrap {
            keys: d[..6].to_vec(),
        })
        .unwrap();
        assert!(text.contains("type = \"choice\""), "{text}");
        assert!(text.contains("choices = [\"fast\", \"slow\"]"), "{text}");
    }

    #[derive(Serialize)]
    struct Wrap {
        keys: Vec<KeyInfo>,
    }

    #[test]
    fn core_choice_names_are_their_serde_names() {
        fn serde_name<T: Serialize>(v: T) -> String {
            #[derive(Serialize)]
            struct W<T> {
                v: T,
            }
            let t = toml::to_string(&W { v }).unwrap();
            t.trim()
                .trim_start_matches("v = ")
                .trim_matches('"')
                .to_string()
        }
        for n in Rounding::NAMES {
            assert_eq!(serde_name(Rounding::parse(n).unwrap()), *n);
        }
        for n in TieBreak::NAMES {
            assert_eq!(serde_name(TieBreak::parse(n).unwrap()), *n);
            assert_eq!(TieBreak::parse(n).unwrap().name(), *n);
        }
        assert_eq!(Rounding::parse("sideways"), None);
        for n in WaitStrategy::NAMES {
            assert_eq!(serde_name(WaitStrategy::parse(n).unwrap()), *n);
        }
        for n in crate::policy::ts::TsSemantics::NAMES {
            let v = crate::policy::ts::TsSemantics::parse(n).unwrap();
            assert_eq!(serde_name(v), *n);
        }
        type Cs = crate::policy::cosched::CoschedScheme;
        for n in <Cs as Choice>::NAMES {
            let s = <Cs as Choice>::parse(n).unwrap();
            assert_eq!(Choice::name(s), *n);
        }
        for n in Wakeup::NAMES {
            assert_eq!(serde_name(Wakeup::parse(n).unwrap()), *n);
        }
    }
}
