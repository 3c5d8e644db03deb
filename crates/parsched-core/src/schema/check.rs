//! The range checks of a key's value (what [`super::Schema::check`] runs),
//! and their wording: `5 is outside (0, 1)`, allowed `0 < L < 1`.

use super::{End, Field, Kind, Typed};
use crate::error::{clip, ConfigError, ECHO_MAX};

/// `0`, `0.5`, `1e-9`: a range end as messages show it.
fn num(x: f64) -> String {
    format!("{x}")
}

/// What a float range allows, as `0 < L < 1`, `T > 0` or `F >= 0`.
pub fn range_text(key: &str, min: Option<End>, max: Option<End>) -> String {
    let op = |closed: bool| if closed { "<=" } else { "<" };
    match (min, max) {
        (Some(a), Some(b)) => format!(
            "{} {} {key} {} {}",
            num(a.value),
            op(a.closed),
            op(b.closed),
            num(b.value)
        ),
        (Some(a), None) => format!(
            "{key} {} {}",
            if a.closed { ">=" } else { ">" },
            num(a.value)
        ),
        (None, Some(b)) => format!("{key} {} {}", op(b.closed), num(b.value)),
        (None, None) => "a finite number".to_string(),
    }
}

fn inside(x: f64, min: Option<End>, max: Option<End>) -> bool {
    x.is_finite()
        && min.is_none_or(|a| if a.closed { x >= a.value } else { x > a.value })
        && max.is_none_or(|b| if b.closed { x <= b.value } else { x < b.value })
}

pub(super) fn outside_msg(x: f64, min: Option<End>, max: Option<End>) -> String {
    match (min, max) {
        (Some(a), Some(_)) if a.value == 0.0 && a.closed && x < 0.0 => {
            format!("{x} is negative")
        }
        (Some(a), Some(b)) => format!(
            "{x} is outside {}{}, {}{}",
            if a.closed { "[" } else { "(" },
            num(a.value),
            num(b.value),
            if b.closed { "]" } else { ")" }
        ),
        (Some(a), None) if a.value == 0.0 && a.closed => {
            format!("{x} is negative or not finite")
        }
        (Some(a), None) if a.value == 0.0 => format!("{x} is not positive"),
        (Some(a), None) => format!("{x} is below {} or not finite", num(a.value)),
        (None, Some(b)) => format!("{x} is above {} or not finite", num(b.value)),
        (None, None) => format!("{x} is not finite"),
    }
}

/// `v` checked against `f`'s range, in `f`'s wording.
pub(super) fn checked<C>(f: &Field<C>, v: &Typed) -> Result<(), ConfigError> {
    check_value(f.key, &f.kind, v).map_err(|mut e| {
        if !f.problem.is_empty() {
            e.message = f.problem.replace("{}", &shown_typed(v));
        }
        if !f.allowed.is_empty() {
            e.allowed = f.allowed.to_string();
        }
        e
    })
}

fn shown_typed(v: &Typed) -> String {
    match v {
        Typed::None => "unset".to_string(),
        Typed::Bool(b) => b.to_string(),
        Typed::Int(i) => i.to_string(),
        Typed::Float(x) => x.to_string(),
        Typed::Choice(c) => c.to_string(),
        Typed::List(xs) => format!("a list of {} numbers", xs.len()),
        Typed::Text(t) => format!("{:?}", clip(t, ECHO_MAX)),
        Typed::Names(n) => n.join(","),
        Typed::Table(rows) => format!("a table of {} rows", rows.len()),
    }
}

/// Checks one value against its kind's range.
pub fn check_value(key: &str, kind: &Kind, v: &Typed) -> Result<(), ConfigError> {
    match (kind, v) {
        (Kind::Int { min, max }, Typed::Int(i)) if i < min || i > max => {
            let allowed = if *max == u64::MAX || *max == u32::MAX as u64 {
                format!("an integer >= {min}")
            } else {
                format!("{min} <= {key} <= {max}")
            };
            let problem = if i < min {
                format!("{i} is below {min}")
            } else {
                format!("{i} is above {max}")
            };
            Err(ConfigError::new(key, problem, allowed))
        }
        (Kind::Choice { choices }, Typed::Text(t)) if !choices.contains(&t.as_str()) => {
            Err(ConfigError::new(
                key,
                format!("{:?} is not a choice", clip(t, ECHO_MAX)),
                choices.join("|"),
            ))
        }
        (Kind::Float { min, max }, Typed::Float(x)) if !inside(*x, *min, *max) => {
            Err(ConfigError::new(
                key,
                outside_msg(*x, *min, *max),
                range_text(key, *min, *max),
            ))
        }
        (Kind::Table { min, max }, Typed::Table(rows)) => {
            for (r, xs) in rows.iter().enumerate() {
                if let Some(i) = xs.iter().position(|x| !inside(*x, *min, *max)) {
                    return Err(ConfigError::new(
                        key,
                        format!(
                            "row {}, value {}: {}",
                            r + 1,
                            i + 1,
                            outside_msg(xs[i], *min, *max)
                        ),
                        format!("rows of numbers: {}", range_text("each", *min, *max)),
                    ));
                }
            }
            Ok(())
        }
        (Kind::List { min, max }, Typed::List(xs)) => {
            match xs.iter().position(|x| !inside(*x, *min, *max)) {
                Some(i) => Err(ConfigError::new(
                    key,
                    format!("value {}: {}", i + 1, outside_msg(xs[i], *min, *max)),
                    format!("numbers: {}", range_text("each", *min, *max)),
                )),
                None => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_value_out_of_range_is_named_by_row_and_place() {
        let kind = Kind::Table {
            min: Some(End {
                value: 0.0,
                closed: false,
            }),
            max: None,
        };
        let ok = Typed::Table(vec![vec![1.0, 2.0], vec![0.5]]);
        check_value("jobs", &kind, &ok).unwrap();
        let bad = Typed::Table(vec![vec![1.0, 2.0], vec![0.5, 0.0]]);
        let e = check_value("jobs", &kind, &bad).unwrap_err();
        assert_eq!(e.message, "row 2, value 2: 0 is not positive");
        assert_eq!(e.allowed, "rows of numbers: each > 0");
        let inf = Typed::Table(vec![vec![f64::INFINITY]]);
        assert!(check_value("jobs", &kind, &inf).is_err());
    }
}
