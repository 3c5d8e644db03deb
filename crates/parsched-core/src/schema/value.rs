//! [`Value`]: a configuration value as a user gives it (TOML, `--set`, a
//! Python dict), the one input type of every configuration's `set`, and its
//! conversions; their errors name the key and what is allowed.

use crate::error::{clip, ConfigError, ECHO_MAX};

/// A configuration value as given by a user (TOML, `--set`, a Python dict).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// A list of numbers (e.g. `samples`).
    List(Vec<f64>),
    /// Rows of numbers (e.g. a per-job list of multipliers).
    Rows(Vec<Vec<f64>>),
}

impl Value {
    /// A number.
    pub fn as_f64(&self, key: &str) -> Result<f64, ConfigError> {
        match self {
            Value::Int(i) => Ok(*i as f64),
            Value::Float(f) => Ok(*f),
            Value::Str(s) => s
                .trim()
                .parse()
                .map_err(|_| type_err(key, self, "a number")),
            Value::Bool(_) | Value::List(_) | Value::Rows(_) => {
                Err(type_err(key, self, "a number"))
            }
        }
    }

    /// A list of numbers: a list, one number, or text of numbers separated by
    /// commas or white space.
    pub fn as_f64_list(&self, key: &str) -> Result<Vec<f64>, ConfigError> {
        match self {
            Value::List(v) => Ok(v.clone()),
            Value::Int(_) | Value::Float(_) => Ok(vec![self.as_f64(key)?]),
            Value::Str(s) => s
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|t| !t.is_empty())
                .map(|t| {
                    t.parse::<f64>().map_err(|_| {
                        ConfigError::new(
                            key,
                            format!("{:?} is not a number", clip(t, ECHO_MAX)),
                            "numbers separated by commas",
                        )
                    })
                })
                .collect(),
            Value::Bool(_) | Value::Rows(_) => Err(type_err(key, self, "a list of numbers")),
        }
    }

    /// Rows of numbers: rows, one list (one row), or text of rows separated
    /// by `;`, each of numbers separated by commas or white space. A row
    /// without numbers is refused.
    pub fn as_rows(&self, key: &str) -> Result<Vec<Vec<f64>>, ConfigError> {
        let allowed = "rows separated by ';', each numbers separated by commas (e.g. 1,1;2,2)";
        let rows = match self {
            Value::Rows(r) => r.clone(),
            Value::List(_) | Value::Int(_) | Value::Float(_) => vec![self.as_f64_list(key)?],
            Value::Str(s) => s
                .split(';')
                .enumerate()
                .map(|(i, row)| {
                    Value::Str(row.to_string()).as_f64_list(key).map_err(|e| {
                        ConfigError::new(key, format!("row {}: {}", i + 1, e.message), allowed)
                    })
                })
                .collect::<Result<_, _>>()?,
            Value::Bool(_) => return Err(type_err(key, self, allowed)),
        };
        match rows.iter().position(Vec::is_empty) {
            Some(i) => Err(ConfigError::new(
                key,
                format!("row {} has no numbers", i + 1),
                allowed,
            )),
            None => Ok(rows),
        }
    }

    /// A non-negative integer.
    pub fn as_u64(&self, key: &str) -> Result<u64, ConfigError> {
        match self {
            Value::Int(i) if *i >= 0 => Ok(*i as u64),
            Value::Float(f) if *f >= 0.0 && f.fract() == 0.0 && *f < 1e18 => Ok(*f as u64),
            Value::Str(s) => s
                .trim()
                .parse()
                .map_err(|_| type_err(key, self, "a non-negative integer")),
            _ => Err(type_err(key, self, "a non-negative integer")),
        }
    }

    /// A non-negative integer below 2^32.
    pub fn as_u32(&self, key: &str) -> Result<u32, ConfigError> {
        let v = self.as_u64(key)?;
        u32::try_from(v).map_err(|_| type_err(key, self, "an integer below 2^32"))
    }

    /// One of `allowed`.
    pub fn as_str(&self, key: &str, allowed: &[&str]) -> Result<String, ConfigError> {
        match self {
            Value::Str(s) if allowed.contains(&s.as_str()) => Ok(s.clone()),
            _ => Err(type_err(key, self, &allowed.join("|"))),
        }
    }

    /// A boolean (or the strings `true` / `false`).
    pub fn as_bool(&self, key: &str) -> Result<bool, ConfigError> {
        match self {
            Value::Bool(b) => Ok(*b),
            Value::Str(s) if s == "true" || s == "false" => Ok(s == "true"),
            _ => Err(type_err(key, self, "true|false")),
        }
    }

    /// The value as an error message shows it.
    pub fn shown(&self) -> String {
        match self {
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Str(s) => format!("{:?}", clip(s, ECHO_MAX)),
            Value::List(v) => format!("a list of {} numbers", v.len()),
            Value::Rows(r) => format!("a table of {} rows", r.len()),
        }
    }
}

/// `KEY: VALUE is not accepted; allowed: ALLOWED`.
pub fn type_err(key: &str, v: &Value, allowed: &str) -> ConfigError {
    ConfigError::new(key, format!("{} is not accepted", v.shown()), allowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_from_text_lists_and_rows_and_their_errors_name_the_row() {
        let t = Value::Str("1,1,2,2; 2 2 1 1;1".into());
        assert_eq!(
            t.as_rows("jobs").unwrap(),
            vec![
                vec![1.0, 1.0, 2.0, 2.0],
                vec![2.0, 2.0, 1.0, 1.0],
                vec![1.0]
            ]
        );
        assert_eq!(
            Value::List(vec![1.0, 2.0]).as_rows("k").unwrap(),
            vec![vec![1.0, 2.0]]
        );
        let rows = vec![vec![1.0], vec![2.0, 3.0]];
        assert_eq!(Value::Rows(rows.clone()).as_rows("k").unwrap(), rows);
        let e = Value::Str("1,2;3,x".into()).as_rows("jobs").unwrap_err();
        assert_eq!(e.field, "jobs");
        assert!(
            e.message.starts_with("row 2: \"x\" is not a number"),
            "{}",
            e.message
        );
        let e = Value::Str("1;;2".into()).as_rows("jobs").unwrap_err();
        assert_eq!(e.message, "row 2 has no numbers");
        assert_eq!(Value::Bool(true).as_rows("k").unwrap_err().field, "k");
        assert!(Value::Rows(rows).as_f64("k").is_err());
    }
}
