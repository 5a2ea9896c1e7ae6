//! Reading guest objects without running guest code: own descriptors instead of property
//! reads, the engine's own built-ins instead of the guest's globals, chains followed at most
//! `MAX_CHAIN` steps, proxies never trapped.

use super::raw::class;
use super::{collect_entries, qjs, raw, text_of, Formatter, MAX_CHAIN, MAX_LISTED_ITEMS};
use rquickjs::function::This;
use rquickjs::{Object, Value};

impl<'a, 'js> Formatter<'a, 'js> {
    /// A guest string's text (lone surrogates replaced); empty for other values.
    pub(super) fn text(&self, v: &Value<'js>) -> String {
        text_of(self.ctx, v)
            .map(|t| t.to_lossy())
            .unwrap_or_default()
    }

    /// A property name as a guest string, made once per formatting call.
    pub(super) fn key(&self, name: &str) -> Option<Value<'js>> {
        let mut names = self.names.borrow_mut();
        if let Some((_, v)) = names.iter().find(|(n, _)| n == name) {
            return Some(v.clone());
        }
        let v = rquickjs::String::from_str(self.ctx.clone(), name)
            .ok()?
            .into_value();
        if names.len() < 32 {
            names.push((name.to_string(), v.clone()));
        }
        Some(v)
    }

    /// An own data property's value (`None` for accessors, missing keys and proxies).
    pub(super) fn own_data(&self, obj: &Object<'js>, name: &str) -> Option<Value<'js>> {
        if raw::is_proxy(obj.as_value()) {
            return None;
        }
        let d = raw::own_descriptor(self.ctx, obj, &self.key(name)?)?;
        (d.flags & qjs::JS_PROP_GETSET as i32 == 0).then_some(d.value)
    }

    pub(super) fn own_index(&self, obj: &Object<'js>, i: usize) -> Option<raw::Descriptor<'js>> {
        let key = Value::new_number(self.ctx.clone(), i as f64);
        raw::own_descriptor(self.ctx, obj, &key)
    }

    /// `obj[key]` where that runs no guest code: a data property, or an accessor of the engine's
    /// own, found along the prototype chain; `None` otherwise.
    pub(super) fn safe_get(&self, obj: &Object<'js>, key: &Value<'js>) -> Option<Value<'js>> {
        let mut cur = obj.clone();
        for _ in 0..MAX_CHAIN {
            if raw::is_proxy(cur.as_value()) {
                return None;
            }
            if let Some(d) = raw::own_descriptor(self.ctx, &cur, key) {
                if d.flags & qjs::JS_PROP_GETSET as i32 == 0 {
                    return Some(d.value);
                }
                return self
                    .error_accessor(&d.getter, key)
                    .and_then(|_| self.call_native(&d.getter, obj));
            }
            cur = raw::prototype_of(self.ctx, &cur)?;
        }
        None
    }

    /// `Some(())` when `getter` is the engine's own accessor for `key` on `Error.prototype`
    /// (the only accessors the printer calls: `stack`), whose call runs no guest code.
    pub(super) fn error_accessor(&self, getter: &Value<'js>, key: &Value<'js>) -> Option<()> {
        let proto = raw::class_proto(self.ctx, class::ERROR)?;
        let d = raw::own_descriptor(self.ctx, &proto, key)?;
        raw::strict_equal(self.ctx, &d.getter, getter).then_some(())
    }

    /// Whether reading `name` or `message` of `obj` would run a guest accessor (reading an
    /// error's stack reads them the first time).
    pub(super) fn guest_accessor(&self, obj: &Object<'js>, name: &str) -> bool {
        let Some(key) = self.key(name) else {
            return true;
        };
        let mut cur = obj.clone();
        for _ in 0..MAX_CHAIN {
            if raw::is_proxy(cur.as_value()) {
                return true;
            }
            if let Some(d) = raw::own_descriptor(self.ctx, &cur, &key) {
                return d.flags & qjs::JS_PROP_GETSET as i32 != 0;
            }
            match raw::prototype_of(self.ctx, &cur) {
                Some(p) => cur = p,
                None => return false,
            }
        }
        true
    }

    pub(super) fn safe_get_str(&self, obj: &Object<'js>, name: &str) -> Option<Value<'js>> {
        self.safe_get(obj, &self.key(name)?)
    }

    pub(super) fn has_property(&self, obj: &Object<'js>, name: &str) -> bool {
        let Some(key) = self.key(name) else {
            return false;
        };
        let mut cur = obj.clone();
        for _ in 0..MAX_CHAIN {
            if raw::is_proxy(cur.as_value()) {
                return false;
            }
            if raw::own_descriptor(self.ctx, &cur, &key).is_some() {
                return true;
            }
            match raw::prototype_of(self.ctx, &cur) {
                Some(p) => cur = p,
                None => return false,
            }
        }
        false
    }

    /// Calls an engine-native function with `this`; `None` for guest functions or on error.
    pub(super) fn call_native(&self, f: &Value<'js>, this: &Object<'js>) -> Option<Value<'js>> {
        if !raw::is_native_function(f) {
            return None;
        }
        let f = f.as_function()?;
        match f.call::<_, Value>((This(this.clone()),)) {
            Ok(v) => Some(v),
            Err(_) => {
                let _ = self.ctx.catch();
                None
            }
        }
    }

    /// Calls a method of a built-in prototype (taken from the engine) on `this`.
    pub(super) fn call_intrinsic(
        &self,
        class_id: u32,
        method: &str,
        this: &Object<'js>,
    ) -> Option<Value<'js>> {
        let proto = raw::class_proto(self.ctx, class_id)?;
        let key = self.key(method)?;
        let d = raw::own_descriptor(self.ctx, &proto, &key)?;
        let f = if d.flags & qjs::JS_PROP_GETSET as i32 != 0 {
            d.getter
        } else {
            d.value
        };
        self.call_native(&f, this)
    }

    pub(super) fn array_length(&self, obj: &Object<'js>) -> usize {
        self.own_data(obj, "length")
            .and_then(|l| l.as_number())
            .unwrap_or(0.0)
            .clamp(0.0, u32::MAX as f64) as usize
    }

    /// Keys of an array or typed array other than its indices. Listing them lists every index
    /// too, so past `MAX_LISTED_ITEMS` items they are left out (Node shows them).
    pub(super) fn extra_keys(&self, obj: &Object<'js>, len: usize) -> Vec<Value<'js>> {
        if len > MAX_LISTED_ITEMS {
            return Vec::new();
        }
        self.keys(obj, true)
    }

    /// Own keys shown for an object: enumerable string keys then enumerable symbols (every own
    /// key with `showHidden`); array indices left out when `skip_index`.
    pub(super) fn keys(&self, obj: &Object<'js>, skip_index: bool) -> Vec<Value<'js>> {
        let enumerable_only = !self.opts.show_hidden;
        let keys = if skip_index {
            raw::own_non_index_keys(self.ctx, obj, true, enumerable_only)
        } else if raw::is_proxy(obj.as_value()) {
            None
        } else {
            raw::own_keys(self.ctx, obj, true, enumerable_only)
        };
        keys.unwrap_or_else(|| {
            let _ = self.ctx.catch();
            Vec::new()
        })
    }

    /// The name of the nearest constructor along the prototype chain whose `prototype` the
    /// object inherits from; `None` for a null prototype.
    pub(super) fn constructor_name(&self, obj: &Object<'js>) -> Option<String> {
        let key = self.key("constructor")?;
        let mut cur = obj.clone();
        let mut first = true;
        for _ in 0..MAX_CHAIN {
            if raw::is_proxy(cur.as_value()) {
                return Some("Object".into());
            }
            if let Some(d) = raw::own_descriptor(self.ctx, &cur, &key) {
                if d.flags & qjs::JS_PROP_GETSET as i32 == 0 {
                    if let Some(f) = d.value.as_object().filter(|_| d.value.is_function()) {
                        let name = self
                            .own_data(f, "name")
                            .map(|n| self.text(&n))
                            .unwrap_or_default();
                        if !name.is_empty() && self.inherits(obj, f) {
                            return Some(name);
                        }
                    }
                }
            }
            match raw::prototype_of(self.ctx, &cur) {
                Some(p) => cur = p,
                None if first => return None,
                None => return Some("Object".into()),
            }
            first = false;
        }
        Some("Object".into())
    }

    /// `obj instanceof f`, read from `f.prototype` as plain data.
    pub(super) fn inherits(&self, obj: &Object<'js>, f: &Object<'js>) -> bool {
        let Some(proto) = self.own_data(f, "prototype") else {
            return false;
        };
        let target = raw::identity(&proto);
        let mut cur = obj.clone();
        for _ in 0..MAX_CHAIN {
            match raw::prototype_of(self.ctx, &cur) {
                Some(p) if raw::identity(p.as_value()) == target => return true,
                Some(p) => cur = p,
                None => return false,
            }
        }
        false
    }

    /// `Symbol.toStringTag` as inherited data, unless it is the constructor's name already or
    /// an own enumerable property (then printed as a key).
    pub(super) fn to_string_tag(&self, obj: &Object<'js>, ctor: Option<&str>) -> String {
        let Some(key) = raw::symbol_to_string_tag(self.ctx) else {
            return String::new();
        };
        if let Some(d) = raw::own_descriptor(self.ctx, obj, &key) {
            if d.flags & qjs::JS_PROP_ENUMERABLE as i32 != 0 {
                return String::new();
            }
        }
        let mut cur = obj.clone();
        for _ in 0..MAX_CHAIN {
            if raw::is_proxy(cur.as_value()) {
                return String::new();
            }
            if let Some(d) = raw::own_descriptor(self.ctx, &cur, &key) {
                if d.flags & qjs::JS_PROP_GETSET as i32 != 0 || !d.value.is_string() {
                    return String::new();
                }
                let tag = self.text(&d.value);
                return if Some(tag.as_str()) == ctor {
                    String::new()
                } else {
                    tag
                };
            }
            match raw::prototype_of(self.ctx, &cur) {
                Some(p) => cur = p,
                None => return String::new(),
            }
        }
        String::new()
    }

    /// Map entries as `[k0, v0, k1, v1, ...]` (Set values as a list), at most `limit` entries,
    /// and the collection's size; read with the realm's own `forEach`.
    pub(super) fn collection(
        &self,
        obj: &Object<'js>,
        is_map: bool,
        limit: usize,
    ) -> (Vec<Value<'js>>, usize) {
        let run = || -> rquickjs::Result<(Vec<Value<'js>>, usize)> {
            let cls = if is_map { class::MAP } else { class::SET };
            let proto = raw::class_proto(self.ctx, cls).ok_or(rquickjs::Error::Unknown)?;
            let for_each = self
                .own_data(&proto, "forEach")
                .filter(raw::is_native_function)
                .and_then(|f| f.into_function())
                .ok_or(rquickjs::Error::Unknown)?;
            collect_entries(self.ctx, obj, &for_each, is_map, limit)
        };
        run().unwrap_or_else(|_| {
            let _ = self.ctx.catch();
            (Vec::new(), 0)
        })
    }

    pub(super) fn collection_size(&self, obj: &Object<'js>, is_map: bool) -> usize {
        let cls = if is_map { class::MAP } else { class::SET };
        self.call_intrinsic(cls, "size", obj)
            .and_then(|s| s.as_number())
            .unwrap_or(0.0) as usize
    }

    /// The source text `Function.prototype.toString` gives.
    pub(super) fn function_source(&self, f: &Object<'js>) -> Option<String> {
        let proto = raw::function_proto(self.ctx)?;
        let to_string = self.own_data(&proto, "toString")?;
        let s = self.call_native(&to_string, f)?;
        Some(self.text(&s))
    }
}
