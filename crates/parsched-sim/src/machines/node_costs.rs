//! The node-costs fragment: the costs of a node's kernel and messaging that
//! both machines of simulated nodes take, seed 003's network of workstations
//! ([`super::cluster`]) and seed 002's parallel desktop ([`super::desktop`],
//! lowered onto it): the clock tick, the one-way latency of a small message,
//! a context switch, an interrupt and the system call that blocks.
//!
//! Their five keys are declared once, here ([`KEYS`]: name, unit; each a
//! finite number >= 0), as schema fields ([`parsched_core::schema::Field`])
//! that each model's schema composes in where it lists them:
//! [`tick_ms`], [`latency_us`], [`context_switch_us`], [`interrupt_us`],
//! [`syscall_us`], each with the model's own one-line doc (what the cost
//! stands for on its machine). A configuration gives the fragment its five
//! values through [`NodeCosts`] (`impl_node_costs!` implements it for a
//! configuration with fields of those names). Imports no machine.

use parsched_core::schema::{Field, Kind, Typed};

/// The five keys, in the fragment's order, with their units.
pub const KEYS: [(&str, &str); 5] = [
    ("tick_ms", "ms"),
    ("latency_us", "µs"),
    ("context_switch_us", "µs"),
    ("interrupt_us", "µs"),
    ("syscall_us", "µs"),
];

/// A configuration holding the five node costs, in [`KEYS`]' order.
pub trait NodeCosts: 'static {
    /// The five values.
    fn node_costs(&self) -> [f64; 5];
    /// The five values, to set.
    fn node_costs_mut(&mut self) -> [&mut f64; 5];
}

/// Implements [`NodeCosts`] for a configuration type with fields named as
/// the keys.
macro_rules! impl_node_costs {
    ($C:ty) => {
        impl $crate::machines::node_costs::NodeCosts for $C {
            fn node_costs(&self) -> [f64; 5] {
                [
                    self.tick_ms,
                    self.latency_us,
                    self.context_switch_us,
                    self.interrupt_us,
                    self.syscall_us,
                ]
            }
            fn node_costs_mut(&mut self) -> [&mut f64; 5] {
                [
                    &mut self.tick_ms,
                    &mut self.latency_us,
                    &mut self.context_switch_us,
                    &mut self.interrupt_us,
                    &mut self.syscall_us,
                ]
            }
        }
    };
}
pub(crate) use impl_node_costs;

fn get<C: NodeCosts, const I: usize>(c: &C) -> Typed {
    Typed::Float(c.node_costs()[I])
}

fn put<C: NodeCosts, const I: usize>(c: &mut C, v: Typed) -> Result<(), &'static str> {
    *c.node_costs_mut()[I] = v.f64()?;
    Ok(())
}

/// Key `I` of [`KEYS`] as a field of `C`, documented by `doc`.
const fn field<C: NodeCosts, const I: usize>(doc: &'static str) -> Field<C> {
    Field {
        key: KEYS[I].0,
        kind: Kind::NONNEG,
        optional: false,
        unit: KEYS[I].1,
        symbol: "",
        section: "",
        doc,
        problem: "",
        allowed: "",
        aliases: &[],
        fold: false,
        get: get::<C, I>,
        put: put::<C, I>,
        parse: None,
        eager: false,
    }
}

/// `tick_ms`: the nodes' clock tick (ms).
pub const fn tick_ms<C: NodeCosts>(doc: &'static str) -> Field<C> {
    field::<C, 0>(doc)
}

/// `latency_us`: the one-way latency of a small message (µs).
pub const fn latency_us<C: NodeCosts>(doc: &'static str) -> Field<C> {
    field::<C, 1>(doc)
}

/// `context_switch_us`: a context switch (µs).
pub const fn context_switch_us<C: NodeCosts>(doc: &'static str) -> Field<C> {
    field::<C, 2>(doc)
}

/// `interrupt_us`: an interrupt, the one that wakes a blocked process (µs).
pub const fn interrupt_us<C: NodeCosts>(doc: &'static str) -> Field<C> {
    field::<C, 3>(doc)
}

/// `syscall_us`: the system call that blocks (or yields) (µs).
pub const fn syscall_us<C: NodeCosts>(doc: &'static str) -> Field<C> {
    field::<C, 4>(doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machines::cluster::{ClusterConfig, SCHEMA};
    use crate::machines::desktop::figs::{FigureConfig, FIGURES_SCHEMA};
    use crate::machines::desktop::{DesktopConfig, FCS_SCHEMA};
    use parsched_core::schema::Schema;
    use parsched_core::Value;

    /// Sets every key of the fragment through `schema` to a value of its own
    /// and reads the struct back: each key reaches its own field.
    fn keys_reach_their_fields<C: NodeCosts + Default>(schema: &Schema<C>) {
        let mut c = C::default();
        for (i, (key, unit)) in KEYS.iter().enumerate() {
            let f = schema.field(key).unwrap_or_else(|| panic!("{key}"));
            assert_eq!((f.unit, f.kind), (*unit, Kind::NONNEG), "{key}");
            schema
                .set(&mut c, key, &Value::Float(10.0 + i as f64))
                .unwrap();
        }
        assert_eq!(c.node_costs(), [10.0, 11.0, 12.0, 13.0, 14.0]);
        for (i, (key, _)) in KEYS.iter().enumerate() {
            assert_eq!(schema.get(&c, key), Some(Typed::Float(10.0 + i as f64)));
            let e = schema.set(&mut c, key, &Value::Float(-1.0));
            let e = e.and_then(|_| schema.check(&c)).unwrap_err();
            assert_eq!(e.field, *key);
            schema.set(&mut c, key, &Value::Float(1.0)).unwrap();
        }
    }

    #[test]
    fn every_model_of_nodes_takes_the_five_cost_keys_from_the_fragment() {
        keys_reach_their_fields::<ClusterConfig>(&SCHEMA);
        keys_reach_their_fields::<DesktopConfig>(&FCS_SCHEMA);
        keys_reach_their_fields::<FigureConfig>(&FIGURES_SCHEMA);
    }
}
