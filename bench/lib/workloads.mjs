// Guest sources shared by every engine. Each *_BODY is a function body
// (quickrealm's default 'function' mode); asScript() wraps it for engines
// that evaluate plain scripts.

export const EDIT_DATA = { root: { title: 'a', items: [1, 2] } };

// Script mode: the completion value (`context`) is the edited data.
export const EDIT_CODE = "context.root.title = 'b'; context.root.items.push(3);";
export const EDIT_CODE_RET = EDIT_CODE + ' context';

export function checkEdit(v) {
  const ok = v && v.root && v.root.title === 'b' && Array.isArray(v.root.items) &&
    v.root.items.length === 3 && v.root.items[0] === 1 && v.root.items[1] === 2 && v.root.items[2] === 3;
  if (!ok) throw new Error(`edit result mismatch: ${JSON.stringify(v)}`);
  return v;
}

export const FIB_BODY = 'function fib(n){return n<2?n:fib(n-1)+fib(n-2)} return fib(24)';
export const FIB_EXPECTED = 46368;

// A small ray tracer: vector objects, prototype method calls, float math,
// shadow and reflection rays. Only + - * / and sqrt are used, so every engine
// produces the same checksum.
export const RAY_BODY = `
class V {
  constructor(x, y, z) { this.x = x; this.y = y; this.z = z; }
  add(o) { return new V(this.x + o.x, this.y + o.y, this.z + o.z); }
  sub(o) { return new V(this.x - o.x, this.y - o.y, this.z - o.z); }
  scale(s) { return new V(this.x * s, this.y * s, this.z * s); }
  mul(o) { return new V(this.x * o.x, this.y * o.y, this.z * o.z); }
  dot(o) { return this.x * o.x + this.y * o.y + this.z * o.z; }
  unit() { const l = Math.sqrt(this.dot(this)); return this.scale(1 / l); }
}
class Sphere {
  constructor(c, r, color, refl) { this.c = c; this.r2 = r * r; this.color = color; this.refl = refl; }
  hit(o, d) {
    const oc = o.sub(this.c);
    const b = oc.dot(d);
    const disc = b * b - (oc.dot(oc) - this.r2);
    if (disc < 0) return -1;
    const s = Math.sqrt(disc);
    let t = -b - s;
    if (t > 1e-4) return t;
    t = -b + s;
    return t > 1e-4 ? t : -1;
  }
  normal(p) { return p.sub(this.c).unit(); }
}
const scene = [
  new Sphere(new V(0, -1000, 0), 999, new V(0.8, 0.8, 0.8), 0.2),
  new Sphere(new V(0, 0, 3), 1, new V(1, 0.2, 0.2), 0.5),
  new Sphere(new V(-2, 0, 4), 1, new V(0.2, 1, 0.2), 0.3),
  new Sphere(new V(2, 0, 4), 1, new V(0.2, 0.2, 1), 0.3),
  new Sphere(new V(0, 1.7, 4.5), 0.7, new V(1, 1, 0.2), 0.1),
];
const lights = [new V(-5, 5, -3), new V(4, 6, -2)];
const black = new V(0, 0, 0);
function nearest(o, d) {
  let best = null, bt = Infinity;
  for (let i = 0; i < scene.length; i++) {
    const t = scene[i].hit(o, d);
    if (t > 0 && t < bt) { bt = t; best = scene[i]; }
  }
  return best === null ? null : { s: best, t: bt };
}
function spec(x) { x = x * x; x = x * x; x = x * x; return x * x; }
function trace(o, d, depth) {
  const h = nearest(o, d);
  if (h === null) return new V(0.1, 0.1, 0.15);
  const p = o.add(d.scale(h.t));
  const n = h.s.normal(p);
  let col = h.s.color.scale(0.1);
  for (let i = 0; i < lights.length; i++) {
    const l = lights[i].sub(p).unit();
    const ndl = n.dot(l);
    if (ndl <= 0 || nearest(p, l) !== null) continue;
    col = col.add(h.s.color.scale(ndl * 0.6));
    const r = l.sub(n.scale(2 * ndl));
    const rd = r.dot(d);
    if (rd > 0) col = col.add(new V(1, 1, 1).scale(spec(rd) * 0.4));
  }
  if (depth > 0 && h.s.refl > 0) {
    const rdir = d.sub(n.scale(2 * n.dot(d)));
    col = col.scale(1 - h.s.refl).add(trace(p, rdir, depth - 1).scale(h.s.refl));
  }
  return col;
}
const W = 16, H = 12;
const eye = new V(0, 0.5, -3);
let sum = 0;
for (let y = 0; y < H; y++) {
  for (let x = 0; x < W; x++) {
    const d = new V((x - W / 2) / W, (H / 2 - y) / W, 1).unit();
    const c = trace(eye, d, 2);
    const r = c.x > 1 ? 255 : (c.x * 255) | 0;
    const g = c.y > 1 ? 255 : (c.y * 255) | 0;
    const b = c.z > 1 ? 255 : (c.z * 255) | 0;
    sum = (sum * 31 + r * 65536 + g * 256 + b) % 1000000007;
  }
}
return sum;
`;

export const asScript = (body) => `(function(){${body}\n})()`;

export const MEMBRANE_BODY = (n) =>
  `let s = 0; for (let i = 0; i < ${n}; i++) s += obj.x; return s;`;
