use super::bridge::*;
use super::protocol::*;
use crate::engine::limits::CancelToken;
use crate::engine::live::{run_to_end, HostPromises};
use crate::engine::marshal::Data;
use crate::engine::marshal::Text;
use crate::engine::run::{LiveGlobals, RunRequest};
use std::cell::RefCell;
use std::rc::Rc;

/// A host with one object (handle 1) whose `push` is built-in method token 7, whose `one`
/// is 1, and whose `releaseEarlier` releases the guest handle kept in `earlier`.
#[derive(Default)]
struct MethodHost {
    calls: RefCell<Vec<(u32, u32, usize)>>,
    attached: RefCell<Option<Rc<GuestHandle>>>,
    earlier: RefCell<Option<Rc<GuestHandle>>>,
}

impl HostBridge for MethodHost {
    fn get(&self, _: u32, key: &Key) -> HostResult<FromHost> {
        match key {
            Key::Name(k) if k == "push" => Ok(FromHost::Method(7)),
            Key::Name(k) if k == "one" => Ok(FromHost::Prim(Data::Number(1.0))),
            Key::Name(k) if k == "releaseEarlier" => {
                if let Some(g) = self.earlier.borrow().as_ref() {
                    g.release();
                }
                Ok(FromHost::Prim(Data::Bool(true)))
            }
            _ => Ok(FromHost::Prim(Data::Undefined)),
        }
    }
    fn set(&self, _: u32, _: &Key, _: ToHost) -> HostResult<()> {
        Ok(())
    }
    fn has(&self, _: u32, _: &Key) -> HostResult<bool> {
        Ok(false)
    }
    fn delete(&self, _: u32, _: &str) -> HostResult<bool> {
        Ok(false)
    }
    fn own_keys(&self, _: u32) -> HostResult<Vec<String>> {
        Ok(Vec::new())
    }
    fn describe(&self, _: u32, _: &str) -> HostResult<Option<bool>> {
        Ok(None)
    }
    fn call(&self, _: u32, _: Option<u32>, _: Vec<ToHost>) -> HostResult<FromHost> {
        Ok(FromHost::Prim(Data::Undefined))
    }
    fn construct(&self, _: u32, _: Vec<ToHost>) -> HostResult<FromHost> {
        Ok(FromHost::Prim(Data::Undefined))
    }
    fn call_method(&self, method: u32, this: u32, args: Vec<ToHost>) -> HostResult<FromHost> {
        self.calls.borrow_mut().push((method, this, args.len()));
        Ok(FromHost::Prim(Data::Number(args.len() as f64)))
    }
    fn then(&self, _: u32, _: u32) -> HostResult<()> {
        Ok(())
    }
    fn attach(&self, guest: &Rc<GuestHandle>) {
        *self.attached.borrow_mut() = Some(guest.clone());
    }
}

fn run_with(source: &str, host: Rc<MethodHost>) -> crate::engine::RunOutcome {
    let live = LiveGlobals {
        bridge: host,
        globals: vec![("obj".into(), FromHost::Ref(1, RefKind::Object))],
        budget: 1000,
        slicer: None,
    };
    run_to_end(
        RunRequest::new(source),
        &CancelToken::new(),
        live,
        &HostPromises::default(),
    )
}

#[test]
fn live_runs_derive_from_the_threads_template_and_keep_it() {
    std::thread::spawn(|| {
        for _ in 0..5 {
            let host = Rc::new(MethodHost::default());
            let outcome = run_with("return obj.push(1, 2)", host.clone());
            assert!(outcome.ok, "{:?}", outcome.error);
            assert_eq!(host.calls.borrow().len(), 1);
        }
        let builds = crate::engine::template::BUILDS.with(|b| b.get());
        assert_eq!(builds, 1);
    })
    .join()
    .expect("the thread survives");
}

#[test]
fn a_live_runs_state_leaves_with_it_and_the_template_keeps_its_size() {
    std::thread::spawn(|| {
        // Proxies, a method stand-in, a callback and copies: all of it is the run's state.
        let source = "const f = () => 1; obj.push(f, obj, [obj], { o: obj }); \
                      return typeof obj.push === 'function' && obj.push === obj.push";
        let mut heaps = Vec::new();
        for _ in 0..3 {
            for _ in 0..300 {
                let host = Rc::new(MethodHost::default());
                let outcome = run_with(source, host.clone());
                assert!(outcome.ok, "{:?}", outcome.error);
                assert_eq!(outcome.value, Some(Data::Bool(true)));
                assert_eq!(host.calls.borrow().as_slice(), &[(7, 1, 4)]);
            }
            heaps.push(crate::engine::template::collected_heap().expect("a template"));
        }
        let builds = crate::engine::template::BUILDS.with(|b| b.get());
        assert_eq!(builds, 1);
        // 300 runs that each left one proxy or closure behind would add far more.
        assert!(
            heaps[2] <= heaps[0] + 8 * 1024,
            "the template grew: {heaps:?}"
        );
    })
    .join()
    .expect("the thread survives");
}

#[test]
fn releasing_an_earlier_runs_handle_leaves_the_current_run_attached() {
    std::thread::spawn(|| {
        let first = Rc::new(MethodHost::default());
        assert!(run_with("return obj.one", first.clone()).ok);
        let earlier = first
            .attached
            .borrow()
            .clone()
            .expect("the first run's handle");
        let second = Rc::new(MethodHost::default());
        *second.earlier.borrow_mut() = Some(earlier);
        // Both runs used this thread's template and its one membrane.
        let outcome = run_with("return obj.releaseEarlier && obj.one + obj.one", second);
        assert!(outcome.ok, "{:?}", outcome.error);
        assert_eq!(outcome.value, Some(Data::Number(2.0)));
        assert_eq!(crate::engine::template::BUILDS.with(|b| b.get()), 1);
    })
    .join()
    .expect("the thread survives");
}

#[test]
fn a_live_run_sets_up_under_its_own_deadline_and_stack_not_the_last_runs() {
    std::thread::Builder::new()
        .stack_size(crate::engine::workers::WORKER_STACK_BYTES)
        .spawn(|| {
            // The run before: a short deadline that passes after it ended, a small stack.
            let mut before = RunRequest::new("return 1");
            before.limits.timeout_ms = 20;
            before.limits.stack_bytes = 64 << 10;
            let first = crate::engine::run::execute(&before, &CancelToken::new());
            assert!(first.ok, "{:?}", first.error);
            std::thread::sleep(std::time::Duration::from_millis(40));
            // And runs that leave garbage up to their own small memory limit.
            for size in (1_000_000..1_046_000).step_by(3_000) {
                let mut tight = RunRequest::new(format!(
                    "const o = {{}}; o.self = o; o.s = 'x'.repeat({size}); return 1"
                ));
                tight.limits.memory_bytes = 1 << 20;
                let _ = crate::engine::run::execute(&tight, &CancelToken::new());
                let host = Rc::new(MethodHost::default());
                let outcome = run_with("return obj.push(1)", host);
                assert!(outcome.ok, "after {size}: {:?}", outcome.error);
            }
            let host = Rc::new(MethodHost::default());
            let outcome = run_with("return obj.push(1)", host);
            assert!(outcome.ok, "{:?}", outcome.error);
        })
        .expect("spawn")
        .join()
        .expect("the thread survives");
}

#[test]
fn a_method_token_is_a_frozen_guest_function_calling_the_host_on_its_receiver() {
    let host = Rc::new(MethodHost::default());
    let outcome = run_with(
        "const f = obj.push;
        const out = [typeof f, Object.isFrozen(f), f === obj.push, 'prototype' in f, obj.push(1, 2, 3)];
        for (const attempt of [() => f(1), () => f.call({}, 1), () => new f()]) {
          try { attempt(); out.push('called'); } catch (e) { out.push(e.name); }
        }
        return out.join();",
        host.clone(),
    );
    assert!(outcome.ok, "{:?}", outcome.error);
    assert_eq!(
        outcome.value,
        Some(Data::String(Text::Utf8(
            "function,true,true,false,3,TypeError,TypeError,TypeError".into()
        )))
    );
    // Only the call on the host object crossed, with the object as its receiver.
    assert_eq!(*host.calls.borrow(), vec![(7, 1, 3)]);
}

#[test]
fn a_host_without_built_in_methods_refuses_a_token_call() {
    // The trait's own answer: a bridge that never hands out tokens refuses to call one.
    let host = MethodHost::default();
    let refused = HostBridge::call_method(&NoMethods(host), 1, 1, Vec::new()).unwrap_err();
    assert_eq!(refused.name, "TypeError");
}

#[test]
fn live_realms_replay_their_shapes_lockdown_plan_and_miss_nothing() {
    use crate::engine::realm::{lockdown, Realm, RealmSpec};
    for with_console in [true, false] {
        // The first realm of each live shape records the plan, later ones replay it.
        let realms: Vec<Realm> = (0..3)
            .map(|_| {
                Realm::build(RealmSpec {
                    with_console,
                    extension: None,
                    live: Some(LiveGlobals {
                        bridge: Rc::new(MethodHost::default()),
                        // Bound after lockdown, and live (never frozen): left out here.
                        globals: Vec::new(),
                        budget: 1000,
                        slicer: None,
                    }),
                    deterministic: None,
                })
                .expect("a live realm")
            })
            .collect();
        for realm in &realms {
            let unfrozen = realm
                .context
                .with(|ctx| lockdown::unfrozen_reachable(&ctx))
                .expect("walk");
            assert_eq!(unfrozen, 0, "console: {with_console}");
        }
    }
}

/// `MethodHost` without its `call_method`: the trait's default.
struct NoMethods(MethodHost);

impl HostBridge for NoMethods {
    fn get(&self, id: u32, key: &Key) -> HostResult<FromHost> {
        self.0.get(id, key)
    }
    fn set(&self, id: u32, key: &Key, value: ToHost) -> HostResult<()> {
        self.0.set(id, key, value)
    }
    fn has(&self, id: u32, key: &Key) -> HostResult<bool> {
        self.0.has(id, key)
    }
    fn delete(&self, id: u32, key: &str) -> HostResult<bool> {
        self.0.delete(id, key)
    }
    fn own_keys(&self, id: u32) -> HostResult<Vec<String>> {
        self.0.own_keys(id)
    }
    fn describe(&self, id: u32, key: &str) -> HostResult<Option<bool>> {
        self.0.describe(id, key)
    }
    fn call(&self, id: u32, this: Option<u32>, args: Vec<ToHost>) -> HostResult<FromHost> {
        self.0.call(id, this, args)
    }
    fn construct(&self, id: u32, args: Vec<ToHost>) -> HostResult<FromHost> {
        self.0.construct(id, args)
    }
    fn then(&self, id: u32, settle: u32) -> HostResult<()> {
        self.0.then(id, settle)
    }
}
