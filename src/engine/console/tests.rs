use super::*;
use crate::engine::raw::class;
use rquickjs::{Array, Context, Runtime};

fn inspect(src: &str) -> String {
    let rt = Runtime::new().unwrap();
    let context = Context::full(&rt).unwrap();
    context.with(|ctx| {
        let v: Value = ctx.eval(src).unwrap();
        Formatter::new(&ctx).inspect(&v)
    })
}

fn log(src: &str) -> String {
    let rt = Runtime::new().unwrap();
    let context = Context::full(&rt).unwrap();
    context.with(|ctx| {
        let args: Array = ctx.eval(src).unwrap();
        let args: Vec<Value> = (0..args.len()).map(|i| args.get(i).unwrap()).collect();
        Formatter::new(&ctx).format_args(&args).unwrap()
    })
}

#[test]
fn class_ids_match_the_engine() {
    let rt = Runtime::new().unwrap();
    let context = Context::full(&rt).unwrap();
    context.with(|ctx| {
        for (src, id) in [
            ("new Number(1)", class::NUMBER),
            ("new String('')", class::STRING),
            ("new Boolean(false)", class::BOOLEAN),
            ("Object(Symbol())", class::SYMBOL),
            ("(function () { return arguments })()", class::ARGUMENTS),
            ("new Date(0)", class::DATE),
            ("Math.max", class::C_FUNCTION),
            ("(function* () {})", class::GENERATOR_FUNCTION),
            ("/x/", class::REGEXP),
            ("Object(1n)", class::BIG_INT),
            ("new Map()", class::MAP),
            ("new Set()", class::SET),
            ("new WeakMap()", class::WEAKMAP),
            ("new WeakSet()", class::WEAKSET),
            ("new DataView(new ArrayBuffer(1))", class::DATAVIEW),
            ("(async function () {})", class::ASYNC_FUNCTION),
            ("(async function* () {})", class::ASYNC_GENERATOR_FUNCTION),
            ("new DOMException('m')", class::DOM_EXCEPTION),
        ] {
            let v: Value = ctx.eval(src).unwrap();
            assert_eq!(raw::class_id(&v), id, "{src}");
        }
    });
}

#[test]
fn primitives_and_functions_print_like_node() {
    for (src, shown) in [
        ("undefined", "undefined"),
        ("null", "null"),
        ("true", "true"),
        ("-0", "-0"),
        ("1.5", "1.5"),
        ("2n ** 64n", "18446744073709551616n"),
        (r#""it's\n\\""#, r#""it's\n\\""#),
        (r#""a'b\"c""#, r#"`a'b"c`"#),
        ("'a\\tb'", "'a\\tb'"),
        ("Symbol('s')", "Symbol(s)"),
        ("Symbol()", "Symbol()"),
        ("(function named() {})", "[Function: named]"),
        ("(() => {})", "[Function (anonymous)]"),
        ("(class A {})", "[class A]"),
        (
            "(() => { class A {}; return class B extends A {} })()",
            "[class B extends A]",
        ),
        ("(async function f() {})", "[AsyncFunction: f]"),
        ("(function* g() {})", "[GeneratorFunction: g]"),
    ] {
        assert_eq!(inspect(src), shown, "{src}");
    }
}

#[test]
fn objects_errors_and_dates() {
    assert_eq!(inspect("new Date(0)"), "1970-01-01T00:00:00.000Z");
    assert_eq!(inspect("new Date(NaN)"), "Invalid Date");
    let e = inspect("new RangeError('bad')");
    assert!(e.starts_with("RangeError: bad\n"), "{e}");
    assert_eq!(
        inspect("(() => { const e = new Error('x'); e.stack = ''; return e })()"),
        "[Error: x]"
    );
    assert_eq!(
        inspect("({ a: 1, 'b-c': [2, 'x'], [Symbol('s')]: 3 })"),
        "{ a: 1, 'b-c': [ 2, 'x' ], [Symbol(s)]: 3 }"
    );
    assert_eq!(inspect("[[[[1]]], {}]"), "[ [ [ [Array] ] ], {} ]");
    assert_eq!(
        inspect("(() => { const a = [1]; a.push(a); return a })()"),
        "<ref *1> [ 1, [Circular *1] ]"
    );
    assert_eq!(inspect("new Map([[1, 2]])"), "Map(1) { 1 => 2 }");
    assert_eq!(inspect("new Set(['a'])"), "Set(1) { 'a' }");
    assert_eq!(
        inspect("({ get x() { throw 1 }, set y(v) {}, get z() { return 1 }, set z(v) {} })"),
        "{ x: [Getter], y: [Setter], z: [Getter/Setter] }"
    );
    assert_eq!(inspect("[1, , 3]"), "[ 1, <1 empty item>, 3 ]");
    assert_eq!(inspect("new Uint8Array([1, 2])"), "Uint8Array(2) [ 1, 2 ]");
    assert_eq!(inspect("/a+/gi"), "/a+/gi");
    assert_eq!(inspect("new Number(5)"), "[Number: 5]");
    assert_eq!(
        inspect("Object.create(null)"),
        "[Object: null prototype] {}"
    );
    assert_eq!(
        inspect("new (class Point { constructor() { this.x = 1 } })()"),
        "Point { x: 1 }"
    );
    assert_eq!(inspect("Promise.resolve(1)"), "Promise { 1 }");
    assert_eq!(inspect("new Promise(() => {})"), "Promise { <pending> }");
    assert_eq!(inspect("new WeakMap()"), "WeakMap { <items unknown> }");
    let many = inspect("Array.from({ length: 101 }, () => 0)");
    assert!(many.ends_with("... 1 more item\n]"), "{many}");
}

#[test]
fn proxies_print_their_target_without_running_traps() {
    assert_eq!(
        inspect(
            "new Proxy({ a: 1 }, { get() { throw 1 }, ownKeys() { throw 2 }, getOwnPropertyDescriptor() { throw 3 }, getPrototypeOf() { throw 4 } })"
        ),
        "{ a: 1 }"
    );
    assert_eq!(
        inspect("(() => { const p = Proxy.revocable({}, {}); p.revoke(); return p.proxy })()"),
        "<Revoked Proxy>"
    );
}

#[test]
fn format_specifiers_are_substituted() {
    assert_eq!(log("['%s is %d', 'Ann', 30]"), "Ann is 30");
    assert_eq!(log("['%i%% %f', 99.7, '1.5x']"), "99% 1.5");
    assert_eq!(log("['%j', { a: [1, 'x'] }]"), r#"{"a":[1,"x"]}"#);
    assert_eq!(log("['%s and %s', 'one']"), "one and %s");
    assert_eq!(log("['%c styled', 'color: red']"), " styled");
    assert_eq!(log("['a', 'b', 1]"), "a b 1");
    assert_eq!(log("['100%%']"), "100%%");
}

#[test]
fn strings_and_lines_are_clipped() {
    let long = inspect("'é'.repeat(10_005)");
    assert!(
        long.ends_with("'... 5 more characters"),
        "{}",
        &long[long.len() - 30..]
    );
    let rt = Runtime::new().unwrap();
    let context = Context::full(&rt).unwrap();
    let line = context.with(|ctx| {
        let args: Vec<Value> = vec![ctx.eval("'x' + 'é'.repeat(40000)").unwrap()];
        Formatter::new(&ctx).format_args(&args).unwrap()
    });
    assert_eq!(
        line.len(),
        MAX_LINE - 1,
        "the last character would straddle the cap"
    );
    let wide = inspect("Array.from({ length: 100000 }, (_, i) => ({ ['k' + i]: 'v'.repeat(20) }))");
    assert!(wide.len() <= MAX_LINE, "{}", wide.len());
    assert_eq!(clip("aé", 2), "a");
    assert_eq!(clip("aé", 3), "aé");
    assert_eq!(clip("aé", 99), "aé");
}
