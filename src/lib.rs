//! quickrealm: run model-written JavaScript in fresh, frozen QuickJS realms from Node.js.

pub mod codes;
pub mod engine;
pub mod exec;
pub mod napi;
pub mod session;
pub mod workspace;
