//! A freezer that records its calls, for deterministic tests.

use super::{BackendKind, Freezer};
use crate::error::{Result, RuntimeError};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// One call recorded by [`Mock`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MockCall {
    Create(String),
    AddPid(String, i32),
    Freeze(String),
    Thaw(String),
    Kill(String),
    Remove(String),
}

/// The shared log of a [`Mock`].
pub type MockLog = Arc<Mutex<Vec<MockCall>>>;

/// Records calls and keeps a frozen flag per group; touches no process except
/// that `kill` SIGKILLs the registered pids (so tests never leak processes).
#[derive(Default)]
pub struct Mock {
    log: MockLog,
    groups: BTreeMap<String, (Vec<i32>, bool)>,
}

impl Mock {
    pub fn new() -> Mock {
        Mock::default()
    }

    /// A handle on the call log, readable after the mock has been moved into
    /// a controller.
    pub fn log(&self) -> MockLog {
        self.log.clone()
    }

    fn rec(&self, c: MockCall) {
        self.log.lock().expect("mock log").push(c);
    }

    fn get_mut(&mut self, name: &str) -> Result<&mut (Vec<i32>, bool)> {
        self.groups
            .get_mut(name)
            .ok_or_else(|| RuntimeError::Unsupported(format!("no group {name}")))
    }
}

impl Freezer for Mock {
    fn kind(&self) -> BackendKind {
        BackendKind::Mock
    }
    fn create(&mut self, name: &str) -> Result<()> {
        self.rec(MockCall::Create(name.into()));
        self.groups.insert(name.into(), (Vec::new(), false));
        Ok(())
    }
    fn join_files(&self, _name: &str) -> Vec<PathBuf> {
        Vec::new()
    }
    fn add_pid(&mut self, name: &str, pid: i32) -> Result<()> {
        self.get_mut(name)?.0.push(pid);
        self.rec(MockCall::AddPid(name.into(), pid));
        Ok(())
    }
    fn request_freeze(&mut self, name: &str) -> Result<()> {
        self.get_mut(name)?.1 = true;
        self.rec(MockCall::Freeze(name.into()));
        Ok(())
    }
    fn confirm_frozen(&mut self, name: &str) -> Result<()> {
        self.get_mut(name).map(|_| ())
    }
    fn thaw(&mut self, name: &str) -> Result<()> {
        self.get_mut(name)?.1 = false;
        self.rec(MockCall::Thaw(name.into()));
        Ok(())
    }
    fn is_frozen(&self, name: &str) -> Result<bool> {
        self.groups
            .get(name)
            .map(|g| g.1)
            .ok_or_else(|| RuntimeError::Unsupported(format!("no group {name}")))
    }
    fn pids(&self, name: &str) -> Result<Vec<i32>> {
        self.groups
            .get(name)
            .map(|g| g.0.clone())
            .ok_or_else(|| RuntimeError::Unsupported(format!("no group {name}")))
    }
    fn kill(&mut self, name: &str) -> Result<()> {
        for &pid in &self.get_mut(name)?.0 {
            // SAFETY: plain syscall.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        self.rec(MockCall::Kill(name.into()));
        Ok(())
    }
    fn remove(&mut self, name: &str) -> Result<()> {
        self.rec(MockCall::Remove(name.into()));
        self.groups.remove(name);
        Ok(())
    }
    fn roots(&self) -> Vec<PathBuf> {
        Vec::new()
    }
    fn cleanup(&mut self) -> Result<()> {
        self.groups.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mock_records_calls_in_order() {
        let mut m = Mock::new();
        let log = m.log();
        m.create("a").unwrap();
        m.freeze("a").unwrap();
        assert!(m.is_frozen("a").unwrap());
        m.thaw("a").unwrap();
        assert!(!m.is_frozen("a").unwrap());
        m.remove("a").unwrap();
        assert!(m.freeze("a").is_err());
        assert_eq!(
            *log.lock().unwrap(),
            vec![
                MockCall::Create("a".into()),
                MockCall::Freeze("a".into()),
                MockCall::Thaw("a".into()),
                MockCall::Remove("a".into()),
            ]
        );
    }
}
