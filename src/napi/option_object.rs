//! The one reader of option objects.
//!
//! Every options argument (`run` options, workspace and `exec` options, `configure()` settings)
//! is declared once, with [`option_object!`], as a `#[napi(object)]` struct: napi-rs writes its
//! real shape into the generated `binding.d.ts`, and the same declaration gives the reader its
//! list of keys. The struct's fields are the host values as given (`Option<Raw>`), typed for
//! TypeScript with `ts_type`; napi-rs's own conversion (`FromNapiValue`) is switched off because
//! it refuses a wrong type with its own message, and the API has always answered with ours
//! (`unknown option key 'x' (expected one of: …)`, `mode must be a string, got a number`).
//!
//! [`read`] checks that the value is an object and that it has no own key the struct does not
//! declare, then reads each declared key once (a getter runs once) and fills the struct. The
//! callers convert the fields with the typed helpers below, which word a wrong type the same way
//! everywhere (`{label} must be {wanted}, got {type}`).
//! The three families of options have always worded an unknown key differently; [`Wording`]
//! keeps each family's words.

use super::raw::{Host, Raw};
use napi::sys::{napi_valuetype, ValueType};

/// A refused option: `INVALID_INPUT` with this message, in whichever error type the caller
/// reports.
#[derive(Debug)]
pub(crate) struct Refusal(pub String);

/// A host failure while reading (a throwing getter, say) is a refusal of the input.
impl From<String> for Refusal {
    fn from(message: String) -> Self {
        Refusal(message)
    }
}

impl From<Refusal> for crate::engine::ErrorInfo {
    fn from(r: Refusal) -> Self {
        crate::engine::ErrorInfo::invalid(r.0)
    }
}

impl From<Refusal> for crate::workspace::WsError {
    fn from(r: Refusal) -> Self {
        crate::workspace::WsError::invalid_input(r.0)
    }
}

pub(crate) type Read<T> = Result<T, Refusal>;

/// An options struct declared with [`option_object!`].
pub(crate) trait OptionObject: Default {
    /// The keys JavaScript may give, in declaration order.
    const KEYS: &'static [&'static str];

    /// The field that holds `key` (one of `KEYS`).
    fn field(&mut self, key: &str) -> Option<&mut Option<Raw>>;
}

/// How each family of options words its refusals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wording {
    /// `run`/`runSync` options: `unknown option key 'x' (expected one of: …)`; `null` is as
    /// good as leaving a key out.
    Run,
    /// `ZipWorkspace` options: `unknown options key 'x'; expected one of: …`; `null` is a value
    /// (and refused where it is not allowed).
    Workspace,
    /// `configure()`: `unknown configure() option 'x'`; `null` is a value.
    Configure,
}

impl Wording {
    fn not_an_object(self, h: Host, v: Raw, name: &str) -> String {
        match self {
            Wording::Configure => "configure() takes an options object".into(),
            _ => format!("{name} must be an object, got {}", h.describe_type(v)),
        }
    }

    fn unknown_key(self, name: &str, key: &str, keys: &[&str]) -> String {
        let keys = keys.join(", ");
        match self {
            Wording::Run => format!("unknown {name} key '{key}' (expected one of: {keys})"),
            Wording::Workspace => format!("unknown {name} key '{key}'; expected one of: {keys}"),
            Wording::Configure => format!("unknown configure() option '{key}'"),
        }
    }

    fn skips(self, h: Host, v: Raw) -> bool {
        match self {
            Wording::Run => h.is_nullish(v),
            _ => h.type_of(v) == ValueType::napi_undefined,
        }
    }
}

/// Reads the options object `v` (named `name` in messages) into `T`: a plain object whose own
/// keys are all declared by `T`. Keys left out (or skipped by `wording`) stay `None`.
pub(crate) fn read<T: OptionObject>(h: Host, v: Raw, name: &str, wording: Wording) -> Read<T> {
    if h.type_of(v) != ValueType::napi_object || h.is_array(v) {
        return Err(Refusal(wording.not_an_object(h, v, name)));
    }
    let mut out = T::default();
    for key in h.own_keys(v)? {
        let key = h.string(key)?;
        if !T::KEYS.contains(&key.as_str()) {
            return Err(Refusal(wording.unknown_key(name, &key, T::KEYS)));
        }
    }
    for key in T::KEYS {
        let value = h.get_named(v, key)?;
        if !wording.skips(h, value) {
            if let Some(field) = out.field(key) {
                *field = Some(value);
            }
        }
    }
    Ok(out)
}

/// Like [`read`], with `undefined` and `null` (an options argument left out) read as no options.
pub(crate) fn read_given<T: OptionObject>(
    h: Host,
    v: Option<Raw>,
    name: &str,
    wording: Wording,
) -> Read<T> {
    match v.filter(|&r| !h.is_nullish(r)) {
        Some(v) => read(h, v, name, wording),
        None => Ok(T::default()),
    }
}

fn is(h: Host, v: Raw, t: napi_valuetype) -> bool {
    h.type_of(v) == t
}

/// `{label} must be {wanted}, got {the value's type}`.
pub(crate) fn wrong_type(h: Host, v: Raw, label: &str, wanted: &str) -> Refusal {
    Refusal(format!(
        "{label} must be {wanted}, got {}",
        h.describe_type(v)
    ))
}

pub(crate) fn string(h: Host, v: Raw, label: &str) -> Read<String> {
    if !is(h, v, ValueType::napi_string) {
        return Err(wrong_type(h, v, label, "a string"));
    }
    Ok(h.string(v)?)
}

pub(crate) fn boolean(h: Host, v: Raw, label: &str) -> Read<bool> {
    if !is(h, v, ValueType::napi_boolean) {
        return Err(wrong_type(h, v, label, "a boolean"));
    }
    Ok(h.boolean(v)?)
}

pub(crate) fn number(h: Host, v: Raw, label: &str) -> Read<f64> {
    if !is(h, v, ValueType::napi_number) {
        return Err(wrong_type(h, v, label, "a number"));
    }
    Ok(h.number(v)?)
}

/// A number, or NaN for any other value (for options whose range check words the refusal).
pub(crate) fn number_or_nan(h: Host, v: Raw) -> Read<f64> {
    if is(h, v, ValueType::napi_number) {
        Ok(h.number(v)?)
    } else {
        Ok(f64::NAN)
    }
}

pub(crate) fn is_function(h: Host, v: Raw) -> bool {
    is(h, v, ValueType::napi_function)
}

/// Declares an options object: a `#[napi(object)]` struct whose fields hold the host values
/// given for each key, typed for TypeScript by `ts_type`, and its [`OptionObject`] impl.
///
/// ```ignore
/// option_object! {
///     #[doc = "Docs of the type."] // (a `///` comment reaches the .d.ts as a raw string)
///     pub struct ToZipOptions {
///         history: "history" = "boolean",
///     }
/// }
/// ```
macro_rules! option_object {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $( $(#[$field_meta:meta])* $field:ident : $key:literal = $ts:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[napi_derive::napi(object, object_from_js = false, object_to_js = false)]
        #[derive(Default)]
        $vis struct $name {
            $(
                $(#[$field_meta])*
                #[napi(js_name = $key, ts_type = $ts)]
                pub $field: Option<$crate::napi::raw::Raw>,
            )*
        }

        impl $crate::napi::option_object::OptionObject for $name {
            const KEYS: &'static [&'static str] = &[$($key),*];

            fn field(&mut self, key: &str) -> Option<&mut Option<$crate::napi::raw::Raw>> {
                match key {
                    $($key => Some(&mut self.$field),)*
                    _ => None,
                }
            }
        }
    };
}

pub(crate) use option_object;
