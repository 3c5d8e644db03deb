//! A model's configuration behind its schema, with its type erased: what a
//! row of the model table (`parsched_sim::models::MODELS`) makes, so that
//! the bindings, the command line and the docs handle every model's
//! configuration the same way without a list of the models' types.
//!
//! A configuration type opts in by implementing [`Schematic`] (its schema
//! and its cross-field checks); [`Configuration`] follows for it.

use super::{KeyInfo, Kind, Schema, Typed, Value};
use crate::error::ConfigError;
use std::any::Any;

/// A configuration described by a [`Schema`], with its own cross-field
/// checks (`validate`, which runs [`Schema::check`] first).
pub trait Schematic: Sized + Send + 'static {
    /// The configuration's keys.
    fn schema() -> &'static Schema<Self>;
    /// Every check: the keys' ranges, then the cross-field rules.
    fn validate_all(&self) -> Result<(), ConfigError>;
}

/// Implements [`Schematic`] for a configuration type whose schema is the
/// static `$schema` and whose inherent `validate` runs every check:
/// `schematic!(PoolsConfig, SCHEMA);`.
#[macro_export]
macro_rules! schematic {
    ($t:ty, $schema:expr) => {
        impl $crate::schema::Schematic for $t {
            fn schema() -> &'static $crate::schema::Schema<Self> {
                &$schema
            }
            fn validate_all(&self) -> Result<(), $crate::ConfigError> {
                self.validate()
            }
        }
    };
}

/// A configuration whose type the caller does not name: keys set and read
/// by name, checked, described. The concrete type is recovered with
/// [`Configuration::into_any`] by the code that runs the model.
pub trait Configuration: Send {
    /// Sets `key` to `v`, converted by the key's kind.
    fn set(&mut self, key: &str, v: &Value) -> Result<(), ConfigError>;
    /// Every check (see [`Schematic::validate_all`]).
    fn validate(&self) -> Result<(), ConfigError>;
    /// Every key with its value in this configuration as the default.
    fn describe(&self) -> Vec<KeyInfo>;
    /// Every key with its value, in documentation order.
    fn values(&self) -> Vec<(&'static str, Typed)>;
    /// The kind of `key` (`None`: not a key).
    fn kind(&self, key: &str) -> Option<Kind>;
    /// Every key, in documentation order.
    fn keys(&self) -> Vec<&'static str>;
    /// The concrete configuration.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
    /// The concrete configuration, borrowed.
    fn as_any(&self) -> &dyn Any;
}

impl<C: Schematic> Configuration for C {
    fn set(&mut self, key: &str, v: &Value) -> Result<(), ConfigError> {
        C::schema().set(self, key, v)
    }
    fn validate(&self) -> Result<(), ConfigError> {
        self.validate_all()
    }
    fn describe(&self) -> Vec<KeyInfo> {
        C::schema().describe(self)
    }
    fn values(&self) -> Vec<(&'static str, Typed)> {
        C::schema()
            .fields
            .iter()
            .map(|f| (f.key, (f.get)(self)))
            .collect()
    }
    fn kind(&self, key: &str) -> Option<Kind> {
        C::schema().field(key).map(|f| f.kind)
    }
    fn keys(&self) -> Vec<&'static str> {
        C::schema().keys()
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field;

    #[derive(Debug, Default, Clone, PartialEq)]
    struct Toy {
        n: u32,
        x: f64,
    }

    const FIELDS: &[super::super::Field<Toy>] = &[
        field!(Toy, "n", n: u32, Kind::int_min(1, 10), "", "", "", "a count"),
        field!(Toy, "x", x: f64, Kind::NONNEG, "s", "", "", "a time"),
    ];
    static SCHEMA: Schema<Toy> = Schema {
        model: "toy",
        fields: FIELDS,
    };

    impl Schematic for Toy {
        fn schema() -> &'static Schema<Toy> {
            &SCHEMA
        }
        fn validate_all(&self) -> Result<(), ConfigError> {
            SCHEMA.check(self)?;
            if self.x > 0.0 && self.n == 1 {
                return Err(ConfigError::new("x", "must be 0 with n = 1", "x = 0"));
            }
            Ok(())
        }
    }

    #[test]
    fn an_erased_configuration_sets_checks_and_comes_back_typed() {
        let mut c: Box<dyn Configuration> = Box::new(Toy { n: 1, x: 0.0 });
        assert_eq!(c.keys(), vec!["n", "x"]);
        c.set("x", &Value::Float(2.5)).unwrap();
        // the cross-field rule, then the range, through the erased type
        assert_eq!(c.validate().unwrap_err().field, "x");
        c.set("n", &Value::Int(11)).unwrap();
        assert_eq!(c.validate().unwrap_err().field, "n");
        c.set("n", &Value::Int(3)).unwrap();
        c.validate().unwrap();
        assert_eq!(c.set("y", &Value::Int(1)).unwrap_err().field, "y");
        assert_eq!(
            c.values(),
            vec![("n", Typed::Int(3)), ("x", Typed::Float(2.5))]
        );
        assert_eq!(c.describe()[1].default, Typed::Float(2.5));
        assert!(matches!(c.kind("n"), Some(Kind::Int { min: 1, max: 10 })));
        assert_eq!(c.kind("y"), None);
        let toy = c.into_any().downcast::<Toy>().unwrap();
        assert_eq!(*toy, Toy { n: 3, x: 2.5 });
    }
}
