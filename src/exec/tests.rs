//! Exec behaviour tests.

use std::sync::{Arc, Mutex};

use super::*;
use crate::engine::errors::{ErrorCode, ErrorInfo};
use crate::engine::limits::CancelToken;
use crate::engine::run::{execute, Mode, RunRequest};
use crate::workspace::{StagedOp, Workspace, WriteQuota, WsCode};

fn workspace(files: &[(&str, &str)]) -> Workspace {
    let mut w = Workspace::new();
    w.set_clock(|| 1_000);
    for (p, body) in files {
        w.write_file(p, body.as_bytes(), true).unwrap();
    }
    w
}

fn exec_req(w: &Workspace, req: &ExecRequest) -> ExecOutcome {
    run_exec(req, w.stage(req.quota), &CancelToken::new())
}

fn exec_in(w: &Workspace, entry: &str) -> ExecOutcome {
    exec_req(w, &ExecRequest::new(entry))
}

fn exec(files: &[(&str, &str)], entry: &str) -> ExecOutcome {
    exec_in(&workspace(files), entry)
}

/// Runs `main.js` alone and returns its stdout, failing on any error.
fn stdout_of(main: &str) -> String {
    let o = exec(&[("main.js", main)], "main.js");
    assert!(o.ok, "{:#?}", o.error);
    o.stdout
}

fn error_of(o: &ExecOutcome) -> &ErrorInfo {
    match &o.error {
        Some(e) => e,
        None => panic!("expected an error: {o:#?}"),
    }
}

#[test]
fn ts_graph_with_relative_and_index_imports() {
    let o = exec(
        &[
            (
                "main.ts",
                "import { greet } from './lib/greet';\nimport { twice } from './lib/math.js';\nimport helpers from './helpers';\nimport { tag } from './lib/m.mjs';\nconst n: number = twice(21);\nconsole.log(greet('ts'), n, helpers.name, tag);\n",
            ),
            (
                "lib/greet.ts",
                "export interface Named { name: string }\nexport function greet(who: string): string { return `hello ${who}`; }\n",
            ),
            ("lib/math.ts", "export const twice = (x: number): number => x * 2;\n"),
            ("lib/m.mjs", "export const tag = 'mjs';\n"),
            ("helpers/index.js", "export default { name: 'index' };\n"),
        ],
        "~/main.ts",
    );
    assert!(o.ok, "{:#?}", o.error);
    assert_eq!(o.exit_code, 0);
    assert_eq!(o.stdout, "hello ts 42 index mjs\n");
    assert_eq!(o.stderr, "");
    assert_eq!(o.changes, Some(vec![]));
}

#[test]
fn typescript_types_interfaces_and_enums() {
    let src = "interface Point { x: number; y: number }\ntype Pair = [number, number];\nenum Dir { Up = 1, Down }\nnamespace NS { export const k = 7; }\nclass C { constructor(private v: number) {} get value(): number { return this.v; } }\nconst p: Point = { x: 1, y: 2 };\nconst pair: Pair = [p.x, p.y];\nconst g = <T,>(x: T): T => x;\nconsole.log(Dir.Down, Dir[1], NS.k, new C(5).value, pair.join(','), g<string>('g'), p satisfies Point ? 'ok' : '');\n";
    let o = exec(&[("main.ts", src)], "main.ts");
    assert!(o.ok, "{:#?}", o.error);
    assert_eq!(o.stdout, "2 Up 7 5 1,2 g ok\n");
}

#[test]
fn errors_point_into_the_failing_module() {
    let o = exec(
        &[
            ("main.ts", "import { f } from './lib/util';\nconsole.log('start');\nf();\n"),
            (
                "lib/util.ts",
                "type A = number;\n\nexport function f(): A {\n  const x: any = null;\n  return x.boom;\n}\n",
            ),
        ],
        "main.ts",
    );
    assert!(!o.ok);
    assert_eq!(o.exit_code, 1);
    assert_eq!(o.stdout, "start\n");
    let e = error_of(&o);
    assert_eq!(e.code, ErrorCode::EvalError);
    assert_eq!(e.name, "TypeError");
    assert_eq!((e.line, e.column), (Some(5), Some(10)));
    assert_eq!(o.error_file.as_deref(), Some("~/lib/util.ts"));
    assert!(e
        .frame
        .as_deref()
        .unwrap_or("")
        .contains("> 5 |   return x.boom;"));
    let stack = e.stack.as_deref().unwrap_or("");
    assert!(stack.contains("~/lib/util.ts:5:10"), "{stack}");
    assert!(stack.contains("~/main.ts:3:"), "{stack}");
}

#[test]
fn syntax_errors_are_located_in_js_and_ts() {
    let o = exec(
        &[
            ("main.js", "import './bad.js';\n"),
            ("bad.js", "let a = 1;\nlet = ;\n"),
        ],
        "main.js",
    );
    let e = error_of(&o);
    assert_eq!(e.name, "SyntaxError");
    assert_eq!(e.line, Some(2));
    assert_eq!(o.error_file.as_deref(), Some("~/bad.js"));

    let o = exec(
        &[
            ("main.ts", "import './bad';\n"),
            ("bad.ts", "const ok = 1;\nconst b: = 2;\n"),
        ],
        "main.ts",
    );
    let e = error_of(&o);
    assert_eq!(e.name, "SyntaxError");
    assert_eq!(e.line, Some(2));
    assert_eq!(o.error_file.as_deref(), Some("~/bad.ts"));
    assert!(e.frame.as_deref().unwrap_or("").contains("const b: = 2;"));
}

#[test]
fn refused_imports_name_the_specifier_and_the_line() {
    let cases = [
        ("lodash", "packages cannot be installed"),
        ("child_process", "Node.js built-in"),
        ("/abs.js", "absolute paths"),
        ("file:///x.js", "URL imports"),
        ("https://x.test/m.js", "URL imports"),
        ("../../escape.js", "leaves the workspace"),
        ("./missing.js", "Cannot find module"),
    ];
    for (spec, why) in cases {
        let main = format!("// first line\nimport x from '{spec}';\nconsole.log(x);\n");
        let o = exec(&[("main.js", &main)], "main.js");
        let e = error_of(&o);
        assert!(!o.ok && o.exit_code == 1);
        assert!(
            e.message.contains(&format!("'{spec}'")) && e.message.contains(why),
            "{spec}: {}",
            e.message
        );
        assert_eq!(e.line, Some(2), "{spec}: {e:?}");
        assert_eq!(o.error_file.as_deref(), Some("~/main.js"));
    }
    // Also from a nested module and through dynamic import().
    let o = exec(
        &[
            ("main.js", "import './a/b.js';\n"),
            ("a/b.js", "\n\nimport 'node:child_process';\n"),
        ],
        "main.js",
    );
    assert_eq!(o.error_file.as_deref(), Some("~/a/b.js"));
    assert_eq!(error_of(&o).line, Some(3));
    let out = stdout_of(
        "try { await import('os'); await import('vm'); } catch (e) { console.log(e.code, e.message.includes(\"'vm'\")); }",
    );
    assert_eq!(out, "ERR_IMPORT_REFUSED true\n");
}

#[test]
fn shims_support_default_and_named_imports() {
    let out = stdout_of(
        "import fs, { readFileSync, promises } from 'fs';\nimport * as nfs from 'node:fs';\nimport fsp, { readFile } from 'fs/promises';\nimport path, { join } from 'node:path';\nimport os, { EOL } from 'os';\nfs.writeFileSync('a.txt', 'A');\nconsole.log(readFileSync('a.txt', 'utf8'), nfs.default === fs, promises === fsp, readFile === fsp.readFile, join('a', 'b'), path.sep, os.homedir(), JSON.stringify(EOL), Object.isFrozen(fs), Object.isFrozen(fs.readFileSync));",
    );
    assert_eq!(out, "A true true true a/b / ~ \"\\n\" true true\n");
}

#[test]
fn fs_behaves_like_node() {
    let out = stdout_of(
        r#"import fs from 'fs';
const code = (f) => { try { f(); return 'ok'; } catch (e) { return e.code; } };
const lines = [];
lines.push(code(() => fs.writeFileSync('out/x.txt', 'x')));
const e = (() => { try { fs.readFileSync('~/nope.txt'); } catch (err) { return err; } })();
lines.push(`${e.code} ${e.errno} ${e.syscall} ${e.path} ${e instanceof Error} | ${e.message}`);
lines.push(String(fs.mkdirSync('out/deep/er', { recursive: true })));
fs.writeFileSync('out/deep/er/x.txt', 'hello ');
fs.appendFileSync('out/deep/er/x.txt', 'world');
const bytes = fs.readFileSync('out/deep/er/x.txt');
lines.push(`${bytes instanceof Uint8Array} ${bytes.length} ${bytes} ${fs.readFileSync('out/deep/er/x.txt', { encoding: 'utf-8' })}`);
lines.push(fs.readdirSync('out').join(','));
lines.push(fs.readdirSync('~', { withFileTypes: true }).map((d) => `${d.name}:${d.isDirectory()}`).join(','));
lines.push(fs.readdirSync('out', { recursive: true }).join(','));
const st = fs.statSync('out/deep/er/x.txt');
lines.push(`${st.isFile()} ${st.isDirectory()} ${st.size} ${fs.statSync('out').isDirectory()} ${fs.statSync('nope', { throwIfNoEntry: false })}`);
lines.push(`${fs.existsSync('out')} ${fs.existsSync('nope')} ${fs.existsSync('.time')} ${fs.existsSync('../x')}`);
lines.push([code(() => fs.mkdirSync('out')), code(() => fs.readdirSync('main.js')), code(() => fs.readFileSync('out')),
  code(() => fs.rmdirSync('out')), code(() => fs.rmSync('out')), code(() => fs.unlinkSync('out')),
  code(() => fs.writeFileSync('main.js/x', '')), code(() => fs.readFileSync(42))].join(','));
fs.renameSync('out/deep', 'moved');
fs.copyFileSync('moved/er/x.txt', 'copy.txt');
lines.push(`${fs.readFileSync('copy.txt', 'utf8')} ${fs.existsSync('out/deep')} ${fs.realpathSync('./moved/../copy.txt')}`);
fs.rmSync('moved', { recursive: true });
fs.rmSync('never', { force: true });
fs.unlinkSync('copy.txt');
lines.push(fs.readdirSync('.').join(','));
fs.writeFileSync('bin.dat', new Uint8Array([0, 255, 16]));
lines.push(`${fs.readFileSync('bin.dat', 'hex')} ${fs.readFileSync('bin.dat', 'base64')} ${fs.readFileSync('bin.dat').toString('hex')}`);
fs.writeFileSync('b64.txt', 'aGk=', 'base64');
lines.push(fs.readFileSync('b64.txt', 'utf8'));
console.log(lines.join('\n'));
"#,
    );
    let expected = [
        "ENOENT",
        "ENOENT -2 open ~/nope.txt true | ENOENT: no such file or directory, open '~/nope.txt'",
        "~/out",
        "true 11 hello world hello world",
        "deep",
        "main.js:false,out:true",
        "deep,deep/er,deep/er/x.txt",
        "true false 11 true undefined",
        "true false false false",
        "EEXIST,ENOTDIR,EISDIR,ENOTEMPTY,ERR_FS_EISDIR,EISDIR,ENOTDIR,ERR_INVALID_ARG_TYPE",
        "hello world false ~/copy.txt",
        "main.js,out",
        "00ff10 AP8Q 00ff10",
        "hi",
    ];
    assert_eq!(out, expected.join("\n") + "\n");
}

#[test]
fn fs_promises_and_callbacks() {
    let out = stdout_of(
        r#"import { mkdir, writeFile, readFile, readdir, stat, rm, access } from 'fs/promises';
import fs from 'fs';
await mkdir('p/q', { recursive: true });
await writeFile('p/q/a.txt', 'async');
const text = await readFile('p/q/a.txt', 'utf8');
const names = await readdir('p/q');
const size = (await stat('p/q/a.txt')).size;
const missing = await access('nope').then(() => 'found', (e) => e.code);
await rm('p', { recursive: true });
const viaCallback = await new Promise((resolve) => fs.readFile('main.js', 'utf8', (err, data) => resolve(err ? err.code : typeof data)));
const cbError = await new Promise((resolve) => fs.stat('nope', (err) => resolve(err.code)));
console.log(text, names.join(), size, missing, fs.existsSync('p'), viaCallback, cbError);
"#,
    );
    assert_eq!(out, "async a.txt 5 ENOENT false string ENOENT\n");
}

#[test]
fn path_and_os_shims() {
    let out = stdout_of(
        r#"import path from 'path';
import os from 'node:os';
console.log([
  path.join('/a/b', '../c', './d'), path.join('a', '', 'b/'), path.join(), path.normalize('a//b/../c/.'),
  path.normalize('./'), path.normalize('/..'), path.resolve('x/y', '../z'), path.resolve('/abs', 'q'),
  path.resolve('~/a', '../..'), path.dirname('/a/b/c.txt'), path.dirname('c.txt'), path.dirname('/a'),
  path.basename('/a/b/c.txt'), path.basename('/a/b/c.txt', '.txt'), path.extname('x.tar.gz'), path.extname('.bashrc'),
  path.relative('/data/orandea/test/aaa', '/data/orandea/impl/bbb'), path.relative('a', 'a/b/c'),
  path.isAbsolute('/x'), path.isAbsolute('x'), path.isAbsolute('~/x'), JSON.stringify(path.parse('/home/u/f.txt')),
  path.format({ dir: '/x', name: 'f', ext: '.js' }), path.posix === path,
  os.tmpdir(), os.platform(), os.EOL === '\n',
].join(' | '));
"#,
    );
    let expected = [
        "/a/c/d",
        "a/b/",
        ".",
        "a/c",
        "./",
        "/",
        "~/x/z",
        "/abs/q",
        "~",
        "/a/b",
        ".",
        "/",
        "c.txt",
        "c",
        ".gz",
        "",
        "../../impl/bbb",
        "b/c",
        "true",
        "false",
        "true",
        r#"{"root":"/","dir":"/home/u","base":"f.txt","ext":".txt","name":"f"}"#,
        "/x/f.js",
        "true",
        "~/tmp",
        "linux",
        "true",
    ];
    assert_eq!(out, expected.join(" | ") + "\n");
}

#[test]
fn a_failed_run_changes_nothing_unless_told() {
    let files = [(
        "main.js",
        "import fs from 'fs';\nfs.writeFileSync('new.txt', 'n');\nfs.rmSync('keep.txt');\nthrow new Error('late failure');\n",
    ), ("keep.txt", "k")];
    let w = workspace(&files);
    let o = exec_in(&w, "main.js");
    assert!(!o.ok);
    assert_eq!(o.changes, None);
    let mut req = ExecRequest::new("main.js");
    req.commit = CommitPolicy::Always;
    let o = exec_req(&w, &req);
    assert!(!o.ok);
    let changes = o.changes.clone().unwrap();
    let mut w2 = w.clone();
    let id = commit_changes(&mut w2, &changes, &o.label()).unwrap();
    assert!(id.is_some());
    assert_eq!(w2.history(1)[0].op, "exec ~/main.js");
    assert!(w2.exists("new.txt") && !w2.exists("keep.txt"));
    // One history entry undoes the whole run.
    w2.undo(1).unwrap();
    assert_eq!(w2.vfs(), w.vfs());
}

#[test]
fn successful_runs_commit_on_top_of_host_changes() {
    let w = workspace(&[
        (
            "main.js",
            "import fs from 'fs';\nfs.writeFileSync('out.txt', 'run');\nfs.rmSync('gone.txt');\n",
        ),
        ("gone.txt", "g"),
    ]);
    let o = exec_in(&w, "main.js");
    assert!(o.ok, "{:#?}", o.error);
    let mut live = w.clone();
    // The host changed things while the run was going.
    live.write_file("host.txt", b"host", false).unwrap();
    live.delete("gone.txt", false).unwrap();
    commit_changes(&mut live, o.changes.as_ref().unwrap(), &o.label()).unwrap();
    assert_eq!(live.read_file("out.txt").unwrap(), b"run");
    assert_eq!(live.read_file("host.txt").unwrap(), b"host");
}

#[test]
fn quota_limits_what_a_run_writes() {
    let w = workspace(&[(
        "main.js",
        "import fs from 'fs';\nlet code;\ntry { fs.writeFileSync('big.bin', new Uint8Array(2048)); } catch (e) { code = e.code + ' ' + e.message; }\nconsole.log(code);\nfs.writeFileSync('small.txt', 'ok');\nfor (let i = 0; i < 10; i++) fs.writeFileSync(`f${i}.txt`, '');\n",
    )]);
    let mut req = ExecRequest::new("main.js");
    req.quota = WriteQuota {
        max_bytes: 1024,
        max_files: 5,
    };
    let o = exec_req(&w, &req);
    assert!(
        o.stdout
            .starts_with("EDQUOT EDQUOT: disk quota exceeded, write '~/big.bin'"),
        "{}",
        o.stdout
    );
    assert!(!o.ok);
    let e = error_of(&o);
    assert!(e.message.contains("EDQUOT"), "{e:?}");
    assert_eq!(e.line, Some(6));
}

#[test]
fn process_exit_codes() {
    let o = exec(
        &[(
            "main.js",
            "console.log('a');\nprocess.exit(0);\nconsole.log('never');\n",
        )],
        "main.js",
    );
    assert!(o.ok && o.exit_code == 0 && o.error.is_none(), "{o:#?}");
    assert_eq!(o.stdout, "a\n");

    let o = exec(
        &[(
            "main.js",
            "import fs from 'fs';\ntry { fs.writeFileSync('x', '1'); process.exit(3); } catch { console.log('caught'); } finally { console.log('finally'); }\nfs.writeFileSync('y', '2');\n",
        )],
        "main.js",
    );
    assert!(!o.ok);
    assert_eq!(o.exit_code, 3);
    assert_eq!(o.stdout, "");
    assert_eq!(error_of(&o).name, "ExitError");
    assert_eq!(o.changes, None);

    // exit(0) after writes commits them; pending jobs do not run after exit.
    let o = exec(
        &[(
            "main.js",
            "import fs from 'fs';\nfs.writeFileSync('x', '1');\nPromise.resolve().then(() => fs.writeFileSync('late', '2'));\nprocess.exit();\n",
        )],
        "main.js",
    );
    assert!(o.ok, "{o:#?}");
    let paths: Vec<String> = o
        .changes
        .unwrap()
        .iter()
        .map(|c| match c {
            StagedOp::Write { path, .. } | StagedOp::Mkdir { path } | StagedOp::Delete { path } => {
                path.clone()
            }
        })
        .collect();
    assert_eq!(paths, vec!["x"]);

    let o = exec(
        &[("main.js", "process.exitCode = 4;\nconsole.log('done');\n")],
        "main.js",
    );
    assert_eq!((o.ok, o.exit_code), (false, 4));
    let o = exec(
        &[("main.js", "await Promise.resolve();\nprocess.exit(2);\n")],
        "main.js",
    );
    assert_eq!((o.ok, o.exit_code), (false, 2));
    let o = exec(&[("main.js", "throw new RangeError('bad');\n")], "main.js");
    assert_eq!((o.ok, o.exit_code), (false, 1));
    assert_eq!(error_of(&o).name, "RangeError");
    let o = exec(
        &[("main.js", "Promise.reject(new TypeError('lost'));\n")],
        "main.js",
    );
    assert_eq!((o.ok, o.exit_code), (false, 1));
    assert_eq!(error_of(&o).name, "TypeError");
}

#[test]
fn argv_env_cwd_and_output_streams() {
    let w = workspace(&[(
        "tool.mjs",
        "console.log(JSON.stringify(process.argv), process.env.MODE, process.cwd());\nconsole.info('info');\nconsole.debug('debug');\nconsole.warn('warn');\nconsole.error('error');\nprocess.stdout.write('par');\nprocess.stdout.write('tial\\nrest');\nprocess.stderr.write('e1\\n');\nprocess.env.ADDED = 'yes';\nconsole.log(process.env.ADDED, typeof process.exit, import.meta.main, import.meta.filename, import.meta.dirname);\n",
    )]);
    let mut req = ExecRequest::new("~/tool.mjs");
    req.argv = vec!["--flag".into(), "value".into()];
    req.env = vec![("MODE".into(), "test".into())];
    let o = exec_req(&w, &req);
    assert!(o.ok, "{:#?}", o.error);
    assert_eq!(
        o.stdout,
        "[\"quickrealm\",\"~/tool.mjs\",\"--flag\",\"value\"] test ~\ninfo\ndebug\npartial\nyes function true ~/tool.mjs ~\nrest"
    );
    assert_eq!(o.stderr, "warn\nerror\ne1\n");
}

#[test]
fn timeouts_stop_exec() {
    let w = workspace(&[("main.js", "console.log('spin');\nfor (;;) {}\n")]);
    let mut req = ExecRequest::new("main.js");
    req.limits.timeout_ms = 100;
    req.commit = CommitPolicy::Always;
    let started = std::time::Instant::now();
    let o = exec_req(&w, &req);
    assert!(started.elapsed().as_millis() < 3000);
    assert_eq!((o.ok, o.exit_code), (false, 1));
    assert_eq!(error_of(&o).code, ErrorCode::Timeout);
    assert_eq!(o.stdout, "spin\n");
}

#[test]
fn the_history_area_and_escapes_are_unreachable() {
    let mut w = workspace(&[(
        "main.js",
        r#"import fs from 'fs';
const code = (f) => { try { f(); return 'ok'; } catch (e) { return e.code; } };
console.log([
  code(() => fs.readdirSync('.time')), code(() => fs.readFileSync('.time/log.json')), code(() => fs.writeFileSync('~/.time/x', '')),
  code(() => fs.readFileSync('../etc/passwd')), code(() => fs.readFileSync('~/../../etc/passwd')), code(() => fs.readFileSync('a/../../x')),
  code(() => fs.writeFileSync('a\\b', '')), code(() => fs.readFileSync('x\0y')), code(() => fs.mkdirSync('C:/x')),
  fs.readdirSync('/').join(','),
].join(' '));
"#,
    )]);
    w.write_file("note.txt", b"n", false).unwrap();
    assert!(!w.history(10).is_empty());
    let back = Workspace::from_zip(&w.to_zip(), &Default::default()).unwrap();
    let o = exec_in(&back, "main.js");
    assert!(o.ok, "{:#?}", o.error);
    assert_eq!(
        o.stdout,
        "EACCES EACCES EACCES EACCES EACCES EACCES EINVAL ERR_INVALID_ARG_VALUE EINVAL main.js,note.txt\n"
    );
    let o = exec(
        &[("main.js", "import x from './.time/log.json';\n")],
        "main.js",
    );
    assert!(error_of(&o).message.contains("reserved"));
}

#[test]
fn bad_entries_are_invalid_input_and_missing_ones_not_found() {
    let w = workspace(&[("notes.txt", "x"), ("dir/a.js", "")]);
    for (entry, text, code) in [
        ("missing.js", "does not exist", ErrorCode::NotFound),
        ("notes.txt", "only .js", ErrorCode::InvalidInput),
        ("dir", "is a folder", ErrorCode::InvalidInput),
        ("../x.js", "climbs above", ErrorCode::InvalidInput),
        (".time/x.js", "reserved", ErrorCode::InvalidInput),
    ] {
        let o = exec_in(&w, entry);
        let e = error_of(&o);
        assert_eq!(e.code, code, "{entry}");
        assert!(e.message.contains(text), "{entry}: {}", e.message);
        assert_eq!(o.exit_code, 1);
    }
}

#[test]
fn guests_cannot_reach_host_powers() {
    let out = stdout_of(
        "const fs = await import('fs');\nconsole.log([typeof require, typeof module, typeof eval, typeof Buffer, (() => { try { return Function('return 1')(); } catch (e) { return e.name; } })(), typeof fs.default.readFileSync].join(' '));",
    );
    assert_eq!(
        out,
        "undefined undefined undefined undefined EvalError function\n"
    );
}

#[test]
fn run_mode_gets_fs_and_path() {
    let ws: SharedWorkspace = Arc::new(Mutex::new(workspace(&[
        ("data/in.txt", "input"),
        ("lib.js", "export const k = 'lib';"),
    ])));
    let mut req = RunRequest::new(
        "const t = fs.readFileSync('data/in.txt', 'utf8');\nfs.writeFileSync(path.join('data', 'out.txt'), t.toUpperCase());\nreturn [t, Object.isFrozen(fs), typeof process];",
    );
    req.extension = Some(workspace_extension(&ws, Mode::Function, "sandbox.js"));
    let o = execute(&req, &CancelToken::new());
    assert!(o.ok, "{o:?}");
    assert_eq!(
        lock_workspace(&ws).read_file("data/out.txt").unwrap(),
        b"INPUT"
    );
    assert_eq!(lock_workspace(&ws).history(1)[0].op, "run sandbox.js");

    let mut req = RunRequest::new(
        "import { writeFileSync } from 'fs';\nimport { k } from './lib.js';\nwriteFileSync('mod.txt', k);\nexport const v = k;",
    );
    req.mode = Mode::Module;
    req.extension = Some(workspace_extension(&ws, Mode::Module, "sandbox.js"));
    let o = execute(&req, &CancelToken::new());
    assert!(o.ok, "{o:?}");
    assert_eq!(lock_workspace(&ws).read_file("mod.txt").unwrap(), b"lib");

    let before = lock_workspace(&ws).to_zip();
    let mut req = RunRequest::new("fs.writeFileSync('fail.txt', 'x');\nthrow new Error('no');");
    req.extension = Some(workspace_extension(&ws, Mode::Function, "sandbox.js"));
    let o = execute(&req, &CancelToken::new());
    assert!(!o.ok);
    assert_eq!(lock_workspace(&ws).to_zip(), before);
}

#[test]
fn settling_applies_changes_once_and_reports_commit_errors() {
    let files = [(
        "main.js",
        "import fs from 'fs';\nfs.mkdirSync('out');\nfs.writeFileSync('out/new.txt', 'n');\n",
    )];
    let shared: SharedWorkspace = Arc::new(Mutex::new(workspace(&files)));
    let snapshot = lock_workspace(&shared).stage(WriteQuota::default());
    let o = run_exec(
        &ExecRequest::new("main.js"),
        snapshot.clone(),
        &CancelToken::new(),
    );
    assert!(o.ok && o.history_id.is_none(), "{o:#?}");
    let settled = o.settle(&shared);
    assert!(settled.ok);
    assert_eq!(settled.history_id, Some(Some(2)));
    assert!(settled.changes.is_none());
    assert_eq!(
        lock_workspace(&shared).read_file("out/new.txt").unwrap(),
        b"n"
    );

    // A run that changed nothing settles with no history entry.
    let mut req = ExecRequest::new("main.js");
    req.commit = CommitPolicy::Never;
    let o = run_exec(&req, snapshot.clone(), &CancelToken::new()).settle(&shared);
    assert_eq!((o.ok, o.history_id), (true, None));

    // The host replaced the folder with a file meanwhile: nothing lands, the run fails.
    let o = run_exec(&ExecRequest::new("main.js"), snapshot, &CancelToken::new());
    {
        let mut ws = lock_workspace(&shared);
        ws.delete("out", true).unwrap();
        ws.write_file("out", b"a file", false).unwrap();
    }
    let before = lock_workspace(&shared).to_zip();
    let o = o.settle(&shared);
    assert_eq!((o.ok, o.exit_code, o.history_id), (false, 1, None));
    let e = error_of(&o);
    assert_eq!(e.name, "CommitError");
    assert!(e.message.contains("none were"), "{}", e.message);
    assert_eq!(lock_workspace(&shared).to_zip(), before);
}

#[test]
fn request_rules() {
    assert!(ExecRequest::check_argv_len(MAX_EXEC_ITEMS).is_ok());
    let e = ExecRequest::check_argv_len(MAX_EXEC_ITEMS + 1).unwrap_err();
    assert_eq!(e.code, WsCode::InvalidInput);
    assert_eq!(
        e.message,
        "options.argv has 10001 entries; the limit is 10000"
    );
    let e = ExecRequest::check_env_len(MAX_EXEC_ITEMS + 1).unwrap_err();
    assert_eq!(
        e.message,
        "options.env has 10001 variables; the limit is 10000"
    );
    assert_eq!(
        CommitPolicy::from_name("on-success"),
        Some(CommitPolicy::OnSuccess)
    );
    assert_eq!(
        CommitPolicy::from_name("always"),
        Some(CommitPolicy::Always)
    );
    assert_eq!(CommitPolicy::from_name("never"), Some(CommitPolicy::Never));
    assert_eq!(CommitPolicy::from_name("sometimes"), None);
}

/// Runs `main.js` with an output cap of `cap` bytes.
fn exec_capped(main: &str, cap: usize) -> ExecOutcome {
    let w = workspace(&[("main.js", main)]);
    let mut req = ExecRequest::new("main.js");
    req.limits.output_bytes = cap;
    req.commit = CommitPolicy::Always;
    exec_req(&w, &req)
}

fn assert_output_limit(o: &ExecOutcome, cap: usize) {
    assert_eq!((o.ok, o.exit_code), (false, 1), "{o:#?}");
    let e = error_of(o);
    assert_eq!(e.code, ErrorCode::OutputLimit, "{e:?}");
    assert_eq!(e.message, format!("output exceeded {cap} bytes"));
    assert!(o.stdout.len() + o.stderr.len() <= cap);
}

#[test]
fn a_partial_line_counts_against_the_output_cap() {
    let o = exec_capped(
        "process.stdout.write('x'.repeat(8 << 20));\nconsole.log('never');\n",
        4096,
    );
    assert_output_limit(&o, 4096);
    assert_eq!(o.stdout, "x".repeat(4096));
    assert_eq!(o.stderr, "");
    let o = exec_capped(
        "process.stderr.write(new Uint8Array(8 << 20).fill(121));\n",
        100,
    );
    assert_output_limit(&o, 100);
    assert_eq!(
        (o.stdout.as_str(), o.stderr.as_str()),
        ("", &*"y".repeat(100))
    );
}

#[test]
fn many_small_writes_stop_at_the_cap_quickly() {
    let started = std::time::Instant::now();
    let o = exec_capped(
        "for (let i = 0; i < 1e7; i++) process.stdout.write('ab');\n",
        4095,
    );
    assert!(started.elapsed().as_secs() < 3);
    assert_output_limit(&o, 4095);
    assert_eq!(o.stdout, format!("{}a", "ab".repeat(2047)));
}

#[test]
fn streams_console_and_emit_share_one_cap() {
    // Exactly the first bytes written are kept, across both streams and every writer.
    let o = exec_capped(
        "console.log('1234');\nprocess.stderr.write('ab');\nemit('EMIT');\nconsole.error('err');\nprocess.stdout.write('partial');\ntry { process.stdout.write('z'.repeat(50)); } catch (e) { console.log('caught'); }\nconsole.log('after');\n",
        30,
    );
    assert_output_limit(&o, 30);
    // 5 (1234\n) + 2 (ab) + 4 (EMIT) + 4 (err\n) + 7 (partial) = 22; 8 more z fit.
    assert_eq!(o.stdout, "1234\nEMITpartialzzzzzzzz");
    assert_eq!(o.stderr, "err\nab", "an unfinished line comes last");
    // A final partial line within the cap is kept, at the end, and is no overflow.
    let o = exec_capped("process.stdout.write('a\\nb');\nconsole.log('c');\n", 5);
    assert!(o.ok, "{:#?}", o.error);
    assert_eq!(o.stdout, "a\nc\nb");
}

#[test]
fn the_output_cap_never_splits_a_character() {
    // 'é' is two bytes: 3 + 2 + 2 > 6, so the cut falls before the second 'é'.
    let o = exec_capped("process.stdout.write('abcéé');\n", 6);
    assert_output_limit(&o, 6);
    assert_eq!(o.stdout, "abcé");
    let o = exec_capped("console.log('😀😀');\n", 7);
    assert_output_limit(&o, 7);
    assert_eq!(o.stdout, "😀");
}

#[test]
fn an_output_overflow_ends_the_run_and_its_writes() {
    let w = workspace(&[(
        "main.js",
        "import fs from 'fs';\nfs.writeFileSync('before.txt', '1');\nPromise.resolve().then(() => { fs.writeFileSync('later.txt', '1'); console.log('later'); });\nprocess.stdout.write('x'.repeat(100));\n",
    )]);
    let mut req = ExecRequest::new("main.js");
    req.limits.output_bytes = 10;
    let o = exec_req(&w, &req);
    assert_output_limit(&o, 10);
    assert_eq!(o.stdout, "x".repeat(10));
    assert!(
        o.changes.is_none(),
        "a failed run commits nothing by default"
    );
    // With `always`, what was written before the overflow is kept, nothing after it.
    req.commit = CommitPolicy::Always;
    let o = exec_req(&w, &req);
    let paths: Vec<String> = o
        .changes
        .unwrap_or_default()
        .into_iter()
        .filter_map(|c| match c {
            StagedOp::Write { path, .. } => Some(path),
            _ => None,
        })
        .collect();
    assert_eq!(paths, vec!["before.txt"]);
}

#[test]
fn a_run_reports_the_bytes_it_wrote() {
    // 5 written, 3 appended, 8 copied, then 2 more written: 18, whatever lands.
    let main = "import fs from 'fs';\nfs.writeFileSync('a.txt', 'hello');\nfs.appendFileSync('a.txt', 'abc');\nfs.copyFileSync('a.txt', 'b.txt');\nfs.writeFileSync('c.txt', 'hi');\n";
    let ok = exec(&[("main.js", main)], "main.js");
    assert!(ok.ok, "{:#?}", ok.error);
    assert_eq!(ok.bytes_written, 18);
    let w = workspace(&[(
        "main.js",
        &format!("{main}throw new Error('after the writes');\n"),
    )]);
    let mut req = ExecRequest::new("main.js");
    req.commit = CommitPolicy::Never;
    let failed = exec_req(&w, &req);
    assert!(!failed.ok && failed.changes.is_none());
    assert_eq!(failed.bytes_written, 18, "counted though nothing lands");
    assert_eq!(exec(&[("main.js", "1;")], "main.js").bytes_written, 0);
    assert_eq!(exec(&[], "missing.js").bytes_written, 0);
}
