/**
 * A deterministic BSBM-shaped dataset (Berlin SPARQL Benchmark e-commerce shape) at any
 * scale: product types in a subclass hierarchy, producers, product features, products,
 * vendors, offers, persons and reviews, with typed literals (integers, decimals, dates,
 * dateTimes), language-tagged text and plain strings. Written as N-Triples, or as triplet
 * NDJSON for the /v1/graph write routes. Same seed and scale, same bytes.
 *
 *   node dist/bench/bsbm/generate.js --products 1000 --out data.nt [--ndjson data.ndjson] [--part K]
 *
 * `--part K` (default 0) generates part K of a series of equal-size datasets whose instances
 * do not overlap: products, producers, vendors, offers, reviewers and reviews are numbered from
 * K × their count per part, and their values come from a seed derived from K. The product type
 * hierarchy and the features are shared by every part (the same triples, so a store that
 * already holds them dedups them). Part 0 is byte for byte the dataset without the option.
 */
import { createWriteStream, type WriteStream } from 'node:fs';

export const NS = 'http://bsbm.example.org/';
export const VOC = `${NS}vocabulary/`;
export const INST = `${NS}instances/`;
const RDF = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';
const RDFS = 'http://www.w3.org/2000/01/rdf-schema#';
const XSD = 'http://www.w3.org/2001/XMLSchema#';
const DC = 'http://purl.org/dc/elements/1.1/';
const REV = 'http://purl.org/stuff/rev#';
const FOAF = 'http://xmlns.com/foaf/0.1/';

/** Mulberry32: small, fast, deterministic. */
export function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima', 'mike',
  'november', 'oscar', 'papa', 'quebec', 'romeo', 'sierra', 'tango', 'uniform', 'victor', 'whiskey', 'xray', 'yankee', 'zulu',
  'sturdy', 'compact', 'wireless', 'digital', 'classic', 'premium', 'portable', 'silent', 'rapid', 'smart'];
const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'JP', 'CN', 'ES', 'AT', 'KR', 'RU'];
const LANGS = ['en', 'de', 'fr', 'es', 'ja'];

export interface Scale {
  products: number;
  types: number;
  producers: number;
  features: number;
  vendors: number;
  offers: number;
  persons: number;
  reviews: number;
}

/** BSBM's proportions: per product ~20 offers/ 10 reviews scaled down to keep triples/product near BSBM's. */
export function scaleFor(products: number): Scale {
  return {
    products,
    types: Math.max(8, Math.round(4 * Math.sqrt(products))),
    producers: Math.max(2, Math.ceil(products / 50)),
    features: Math.max(20, Math.round(2 * Math.sqrt(products))),
    vendors: Math.max(2, Math.ceil(products / 100)),
    offers: products * 10,
    persons: Math.max(5, Math.ceil(products / 4)),
    reviews: products * 5,
  };
}

export interface Sink {
  triple(s: string, p: string, o: string): void;
  /** A triplet-shaped record (entity → relation → entity) for the NDJSON form. */
  edge(sType: string, sName: string, relation: string, tType: string, tName: string): void;
  props(type: string, name: string, properties: Record<string, string | number | boolean>): void;
}

const iri = (v: string) => `<${v}>`;
const lit = (v: string) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
const typed = (v: string | number, t: string) => `"${v}"^^<${XSD}${t}>`;
const lang = (v: string, l: string) => `${lit(v)}@${l}`;

function words(r: () => number, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(r() * WORDS.length)]!);
  return out.join(' ');
}

function date(r: () => number, fromYear: number, span: number): string {
  const d = new Date(Date.UTC(fromYear, 0, 1) + Math.floor(r() * span * 365) * 86_400_000);
  return d.toISOString().slice(0, 10);
}

/** Emits the whole dataset (or part `part` of a series, see the header) into a sink, in a fixed order. */
export function generate(sc: Scale, sink: Sink, seed = 42, part = 0) {
  let r = rng(seed);
  const t = (s: string, p: string, o: string) => sink.triple(s, p, o);
  // First instance number of each kind in this part (all 0 for part 0).
  const base = {
    product: part * sc.products, producer: part * sc.producers, vendor: part * sc.vendors,
    offer: part * sc.offers, person: part * sc.persons, review: part * sc.reviews,
  };
  // Product type hierarchy: a tree where type i's parent is (i-1)/4.
  for (let i = 0; i < sc.types; i++) {
    const ty = iri(`${INST}ProductType${i}`);
    t(ty, iri(`${RDF}type`), iri(`${VOC}ProductType`));
    t(ty, iri(`${RDFS}label`), lit(`product type ${i} ${words(r, 1)}`));
    if (i > 0) t(ty, iri(`${RDFS}subClassOf`), iri(`${INST}ProductType${Math.floor((i - 1) / 4)}`));
  }
  for (let i = 0; i < sc.features; i++) {
    const f = iri(`${INST}ProductFeature${i}`);
    t(f, iri(`${RDF}type`), iri(`${VOC}ProductFeature`));
    t(f, iri(`${RDFS}label`), lit(`feature ${words(r, 2)} ${i}`));
  }
  // Types and features above are shared by every part; the instances below are the part's own.
  if (part > 0) r = rng(seed + part * 7919);
  for (let j = 0; j < sc.producers; j++) {
    const i = base.producer + j;
    const p = iri(`${INST}Producer${i}`);
    t(p, iri(`${RDF}type`), iri(`${VOC}Producer`));
    t(p, iri(`${RDFS}label`), lit(`producer ${words(r, 1)} ${i}`));
    t(p, iri(`${VOC}country`), iri(`http://downlode.org/rdf/iso-3166/countries#${COUNTRIES[i % COUNTRIES.length]}`));
    t(p, iri(`${FOAF}homepage`), iri(`http://www.producer${i}.example.com/`));
    sink.props('Producer', `Producer${i}`, { country: COUNTRIES[i % COUNTRIES.length]! });
  }
  for (let j = 0; j < sc.products; j++) {
    const i = base.product + j;
    const name = `Product${i}`;
    const p = iri(`${INST}${name}`);
    const type = Math.floor(r() * sc.types);
    const producer = base.producer + Math.floor(r() * sc.producers);
    t(p, iri(`${RDF}type`), iri(`${VOC}Product`));
    // Like BSBM, a product is an instance of its type and of every ancestor type.
    for (let ty = type; ; ty = Math.floor((ty - 1) / 4)) {
      t(p, iri(`${RDF}type`), iri(`${INST}ProductType${ty}`));
      if (ty === 0) break;
    }
    const label = `${words(r, 2)} ${i}`;
    t(p, iri(`${RDFS}label`), lit(label));
    t(p, iri(`${RDFS}comment`), lang(`${words(r, 8)} product ${i}`, 'en'));
    t(p, iri(`${VOC}producer`), iri(`${INST}Producer${producer}`));
    sink.edge('Product', name, 'producer', 'Producer', `Producer${producer}`);
    sink.edge('Product', name, 'type', 'ProductType', `ProductType${type}`);
    const nf = 3 + Math.floor(r() * 5);
    for (let k = 0; k < nf; k++) {
      const f = Math.floor(r() * sc.features);
      t(p, iri(`${VOC}productFeature`), iri(`${INST}ProductFeature${f}`));
      sink.edge('Product', name, 'productFeature', 'ProductFeature', `ProductFeature${f}`);
    }
    const n1 = 1 + Math.floor(r() * 2000);
    const n2 = 1 + Math.floor(r() * 2000);
    t(p, iri(`${VOC}productPropertyNumeric1`), typed(n1, 'integer'));
    t(p, iri(`${VOC}productPropertyNumeric2`), typed(n2, 'integer'));
    t(p, iri(`${VOC}productPropertyTextual1`), lit(words(r, 3)));
    t(p, iri(`${DC}date`), typed(date(r, 2000, 8), 'date'));
    sink.props('Product', name, { label, numeric1: n1, numeric2: n2 });
  }
  for (let j = 0; j < sc.vendors; j++) {
    const i = base.vendor + j;
    const v = iri(`${INST}Vendor${i}`);
    t(v, iri(`${RDF}type`), iri(`${VOC}Vendor`));
    t(v, iri(`${RDFS}label`), lit(`vendor ${words(r, 1)} ${i}`));
    t(v, iri(`${VOC}country`), iri(`http://downlode.org/rdf/iso-3166/countries#${COUNTRIES[(i * 3) % COUNTRIES.length]}`));
  }
  for (let j = 0; j < sc.offers; j++) {
    const i = base.offer + j;
    const o = iri(`${INST}Offer${i}`);
    const product = base.product + Math.floor(r() * sc.products);
    const vendor = base.vendor + Math.floor(r() * sc.vendors);
    t(o, iri(`${RDF}type`), iri(`${VOC}Offer`));
    t(o, iri(`${VOC}product`), iri(`${INST}Product${product}`));
    t(o, iri(`${VOC}vendor`), iri(`${INST}Vendor${vendor}`));
    const price = (5 + r() * 9995).toFixed(2);
    t(o, iri(`${VOC}price`), typed(price, 'decimal'));
    t(o, iri(`${VOC}validFrom`), typed(`${date(r, 2008, 1)}T00:00:00Z`, 'dateTime'));
    t(o, iri(`${VOC}validTo`), typed(`${date(r, 2009, 1)}T00:00:00Z`, 'dateTime'));
    t(o, iri(`${VOC}deliveryDays`), typed(1 + Math.floor(r() * 21), 'integer'));
    sink.edge('Offer', `Offer${i}`, 'product', 'Product', `Product${product}`);
    sink.edge('Offer', `Offer${i}`, 'vendor', 'Vendor', `Vendor${vendor}`);
    sink.props('Offer', `Offer${i}`, { price: Number(price) });
  }
  for (let j = 0; j < sc.persons; j++) {
    const i = base.person + j;
    const p = iri(`${INST}Reviewer${i}`);
    t(p, iri(`${RDF}type`), iri(`${FOAF}Person`));
    t(p, iri(`${FOAF}name`), lit(`reviewer ${words(r, 1)} ${i}`));
    t(p, iri(`${VOC}country`), iri(`http://downlode.org/rdf/iso-3166/countries#${COUNTRIES[i % COUNTRIES.length]}`));
  }
  for (let j = 0; j < sc.reviews; j++) {
    const i = base.review + j;
    const rv = iri(`${INST}Review${i}`);
    const product = base.product + Math.floor(r() * sc.products);
    const reviewer = base.person + Math.floor(r() * sc.persons);
    const l = LANGS[Math.floor(r() * LANGS.length)]!;
    t(rv, iri(`${RDF}type`), iri(`${REV}Review`));
    t(rv, iri(`${VOC}reviewFor`), iri(`${INST}Product${product}`));
    t(rv, iri(`${REV}reviewer`), iri(`${INST}Reviewer${reviewer}`));
    t(rv, iri(`${DC}title`), lang(words(r, 4), l));
    t(rv, iri(`${REV}text`), lang(words(r, 20), l));
    t(rv, iri(`${VOC}reviewDate`), typed(date(r, 2007, 2), 'date'));
    if (r() < 0.7) t(rv, iri(`${VOC}rating1`), typed(1 + Math.floor(r() * 10), 'integer'));
    if (r() < 0.7) t(rv, iri(`${VOC}rating2`), typed(1 + Math.floor(r() * 10), 'integer'));
    sink.edge('Review', `Review${i}`, 'reviewFor', 'Product', `Product${product}`);
    sink.edge('Review', `Review${i}`, 'reviewer', 'Person', `Reviewer${reviewer}`);
  }
}

/** Writes with backpressure handled by buffering in bounded slices. */
class BufferedWriter {
  private buf: string[] = [];
  private size = 0;
  constructor(private readonly out: WriteStream | null) {}
  write(line: string) {
    if (!this.out) return;
    this.buf.push(line);
    this.size += line.length;
    if (this.size > 1 << 20) this.flush();
  }
  flush() {
    if (!this.out || this.buf.length === 0) return;
    this.out.write(this.buf.join(''));
    this.buf = [];
    this.size = 0;
  }
  end(): Promise<void> {
    this.flush();
    return new Promise((resolve) => (this.out ? this.out.end(resolve) : resolve()));
  }
}

export async function writeDataset(products: number, ntPath: string | null, ndjsonPath: string | null, seed = 42, part = 0) {
  const nt = new BufferedWriter(ntPath ? createWriteStream(ntPath) : null);
  const nd = new BufferedWriter(ndjsonPath ? createWriteStream(ndjsonPath) : null);
  let triples = 0;
  let records = 0;
  generate(scaleFor(products), {
    triple(s, p, o) {
      triples++;
      nt.write(`${s} ${p} ${o} .\n`);
    },
    edge(sType, sName, relation, tType, tName) {
      records++;
      nd.write(JSON.stringify({ source: { type: sType, name: sName }, relation, target: { type: tType, name: tName } }) + '\n');
    },
    props(type, name, properties) {
      records++;
      nd.write(JSON.stringify({ type, name, properties }) + '\n');
    },
  }, seed, part);
  await Promise.all([nt.end(), nd.end()]);
  return { triples, records };
}

/** Products needed for about `triples` N-Triples (≈ 123 triples per product at these proportions). */
export function productsForTriples(triples: number): number {
  return Math.max(10, Math.round(triples / 123));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (n: string) => {
    const i = process.argv.indexOf(`--${n}`);
    return i >= 0 ? process.argv[i + 1] ?? null : null;
  };
  const products = arg('products') ? Number(arg('products')) : productsForTriples(Number(arg('triples') ?? 100_000));
  const part = Number(arg('part') ?? 0);
  if (!Number.isInteger(part) || part < 0) throw new Error('--part must be a non-negative integer');
  const out = await writeDataset(products, arg('out'), arg('ndjson'), 42, part);
  console.log(JSON.stringify({ products, part, ...out }));
}
