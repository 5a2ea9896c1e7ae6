//! `URL` and `URLSearchParams` (WHATWG URL Standard). Parsing, serialising and the setters are
//! the `url` crate's (its `quirks` module implements the standard's API semantics); the classes
//! are guest code (`url_api.js`) over the native helpers below, which only they can reach.

use super::super::marshal::text_of;
use super::super::raw;
use rquickjs::function::Opt;
use rquickjs::{Array, Ctx, Exception, Function, Object, Value};
use url::{quirks, Url};

const SOURCE: &str = include_str!("url_api.js");

/// Defines `URL` and `URLSearchParams` on the global object (before lockdown).
pub(crate) fn install<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<()> {
    let make: Function = raw::eval_helper(ctx, SOURCE, c"quickrealm:url")?.get()?;
    let parse = Function::new(ctx.clone(), parse_url)?;
    let set = Function::new(ctx.clone(), set_component)?;
    let form_parse = Function::new(ctx.clone(), parse_form)?;
    let form_serialize = Function::new(ctx.clone(), serialize_form)?;
    let made: Object = make.call((parse, set, form_parse, form_serialize))?;
    let global = ctx.globals();
    for name in ["URL", "URLSearchParams"] {
        let v: Value = made.get(name)?;
        global.set(name, v)?;
    }
    Ok(())
}

/// Longest string the helpers take: parsing is linear but not interruptible, so a bound keeps
/// one call well inside any deadline.
const MAX_INPUT_BYTES: usize = 8 << 20;

/// The string a guest value converts to (the classes convert before calling in).
fn string_arg<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> rquickjs::Result<String> {
    let text = text_of(ctx, v)
        .map(|t| t.to_lossy())
        .ok_or_else(|| Exception::throw_type(ctx, "expected a string"))?;
    if text.len() > MAX_INPUT_BYTES {
        return Err(Exception::throw_range(
            ctx,
            "URL input longer than this sandbox allows (8 MiB)",
        ));
    }
    Ok(text)
}

/// Every component the classes expose, in the order `url.js` reads them.
fn components<'js>(ctx: &Ctx<'js>, url: &Url) -> rquickjs::Result<Array<'js>> {
    let parts = [
        quirks::href(url),
        &quirks::origin(url),
        quirks::protocol(url),
        quirks::username(url),
        quirks::password(url),
        quirks::host(url),
        quirks::hostname(url),
        quirks::port(url),
        quirks::pathname(url),
        quirks::search(url),
        quirks::hash(url),
    ]
    .map(str::to_owned);
    let out = Array::new(ctx.clone())?;
    for (i, part) in parts.into_iter().enumerate() {
        out.set(i, part)?;
    }
    Ok(out)
}

/// `parse(input, base?)`: the components of the parsed URL, or `null` when it does not parse.
fn parse_url<'js>(
    ctx: Ctx<'js>,
    input: Value<'js>,
    base: Opt<Value<'js>>,
) -> rquickjs::Result<Value<'js>> {
    let input = string_arg(&ctx, &input)?;
    let parsed = match base.0.filter(|b| !b.is_undefined()) {
        Some(base) => {
            let base = string_arg(&ctx, &base)?;
            Url::parse(&base).and_then(|b| Url::options().base_url(Some(&b)).parse(&input))
        }
        None => Url::parse(&input),
    };
    match parsed {
        Ok(url) => Ok(components(&ctx, &url)?.into_value()),
        Err(_) => Ok(Value::new_null(ctx)),
    }
}

/// `set(href, component, value)`: the components after a setter, or `null` when the `href`
/// setter is given a URL that does not parse.
fn set_component<'js>(
    ctx: Ctx<'js>,
    href: Value<'js>,
    component: Value<'js>,
    value: Value<'js>,
) -> rquickjs::Result<Value<'js>> {
    let href = string_arg(&ctx, &href)?;
    let component = string_arg(&ctx, &component)?;
    let value = string_arg(&ctx, &value)?;
    let Ok(mut url) = Url::parse(&href) else {
        return Ok(Value::new_null(ctx));
    };
    // Only the `href` setter can fail; the others ignore values they cannot take, as the
    // standard says.
    match component.as_str() {
        "href" => {
            if quirks::set_href(&mut url, &value).is_err() {
                return Ok(Value::new_null(ctx));
            }
        }
        "protocol" => drop(quirks::set_protocol(&mut url, &value)),
        "username" => drop(quirks::set_username(&mut url, &value)),
        "password" => drop(quirks::set_password(&mut url, &value)),
        "host" => drop(quirks::set_host(&mut url, &value)),
        "hostname" => drop(quirks::set_hostname(&mut url, &value)),
        "port" => drop(quirks::set_port(&mut url, &value)),
        "pathname" => quirks::set_pathname(&mut url, &value),
        "search" => quirks::set_search(&mut url, &value),
        "hash" => quirks::set_hash(&mut url, &value),
        _ => return Err(Exception::throw_type(&ctx, "unknown URL component")),
    }
    Ok(components(&ctx, &url)?.into_value())
}

/// `application/x-www-form-urlencoded` parsing: `[name, value, name, value, ...]`.
fn parse_form<'js>(ctx: Ctx<'js>, input: Value<'js>) -> rquickjs::Result<Array<'js>> {
    let input = string_arg(&ctx, &input)?;
    let out = Array::new(ctx.clone())?;
    let mut i = 0;
    for (name, value) in form_urlencoded::parse(input.as_bytes()) {
        out.set(i, name.as_ref())?;
        out.set(i + 1, value.as_ref())?;
        i += 2;
    }
    Ok(out)
}

/// `application/x-www-form-urlencoded` serialising of `[name, value, name, value, ...]`.
fn serialize_form<'js>(ctx: Ctx<'js>, flat: Array<'js>) -> rquickjs::Result<String> {
    let mut out = form_urlencoded::Serializer::new(String::new());
    let mut items = flat.iter::<Value>();
    while let (Some(name), Some(value)) = (items.next(), items.next()) {
        out.append_pair(&string_arg(&ctx, &name?)?, &string_arg(&ctx, &value?)?);
    }
    Ok(out.finish())
}
