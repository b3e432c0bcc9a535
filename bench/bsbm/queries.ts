/**
 * The BSBM "explore" query mix adapted to the generator's IRIs: point lookups, numeric and
 * date range filters, OPTIONAL, ORDER BY/LIMIT, UNION, a text FILTER, DESCRIBE and
 * CONSTRUCT. Parameters are drawn deterministically, so every run sends the same queries.
 */
import { INST, VOC, rng, scaleFor, type Scale } from './generate.js';

const PREFIXES = `PREFIX bsbm: <${VOC}>
PREFIX inst: <${INST}>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX dc: <http://purl.org/dc/elements/1.1/>
PREFIX rev: <http://purl.org/stuff/rev#>
PREFIX foaf: <http://xmlns.com/foaf/0.1/>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
`;

export interface MixQuery {
  name: string;
  /** The SPARQL text, prologue included. */
  text: string;
  /** Accept header a client would send. */
  accept: string;
}

type Template = (r: () => number, sc: Scale) => string;

const pick = (r: () => number, n: number) => Math.floor(r() * n);

const TEMPLATES: [string, Template, string][] = [
  ['Q1 type+features+numeric filter, ORDER BY LIMIT', (r, sc) => `SELECT DISTINCT ?product ?label WHERE {
  ?product rdfs:label ?label ; a inst:ProductType${pick(r, 5)} ;
           bsbm:productFeature inst:ProductFeature${pick(r, sc.features)} ;
           bsbm:productPropertyNumeric1 ?value1 .
  FILTER (?value1 > ${pick(r, 500)})
} ORDER BY ?label LIMIT 10`, 'application/sparql-results+json'],
  ['Q2 product details, OPTIONAL', (r, sc) => {
    const p = `inst:Product${pick(r, sc.products)}`;
    return `SELECT ?label ?comment ?producer ?f ?text ?n1 ?n2 WHERE {
  ${p} rdfs:label ?label ; rdfs:comment ?comment ; bsbm:producer ?p ;
      bsbm:productFeature ?feature ; bsbm:productPropertyTextual1 ?text ; bsbm:productPropertyNumeric1 ?n1 .
  ?p rdfs:label ?producer . ?feature rdfs:label ?f .
  OPTIONAL { ${p} bsbm:productPropertyNumeric2 ?n2 }
}`;
  }, 'application/sparql-results+json'],
  ['Q3 numeric range, OPTIONAL + !bound', (r, sc) => `SELECT ?product ?label WHERE {
  ?product rdfs:label ?label ; a inst:ProductType${pick(r, 5)} ;
           bsbm:productFeature inst:ProductFeature${pick(r, sc.features)} ;
           bsbm:productPropertyNumeric1 ?p1 ; bsbm:productPropertyNumeric2 ?p2 .
  FILTER (?p1 > ${pick(r, 1000)} && ?p2 < ${1000 + pick(r, 1000)})
  OPTIONAL { ?product bsbm:productFeature inst:ProductFeature${pick(r, sc.features)} . ?product rdfs:label ?testVar }
  FILTER (!bound(?testVar))
} ORDER BY ?label LIMIT 10`, 'application/sparql-results+json'],
  ['Q4 UNION, ORDER BY OFFSET LIMIT', (r, sc) => {
    const type = pick(r, 5);
    return `SELECT DISTINCT ?product ?label ?n WHERE {
  { ?product rdfs:label ?label ; a inst:ProductType${type} ; bsbm:productFeature inst:ProductFeature${pick(r, sc.features)} ;
             bsbm:productPropertyNumeric1 ?n . FILTER (?n > ${pick(r, 1000)}) }
  UNION
  { ?product rdfs:label ?label ; a inst:ProductType${type} ; bsbm:productFeature inst:ProductFeature${pick(r, sc.features)} ;
             bsbm:productPropertyNumeric2 ?n . FILTER (?n > ${pick(r, 1000)}) }
} ORDER BY ?label OFFSET 5 LIMIT 10`;
  }, 'application/sparql-results+json'],
  ['Q5 similar products (join, numeric window)', (r, sc) => {
    const p = pick(r, sc.products);
    return `SELECT DISTINCT ?product ?label WHERE {
  ?product rdfs:label ?label . FILTER (inst:Product${p} != ?product)
  inst:Product${p} bsbm:productFeature ?f . ?product bsbm:productFeature ?f .
  inst:Product${p} bsbm:productPropertyNumeric1 ?o1 . ?product bsbm:productPropertyNumeric1 ?s1 .
  FILTER (?s1 < (?o1 + 120) && ?s1 > (?o1 - 120))
} ORDER BY ?label LIMIT 5`;
  }, 'application/sparql-results+json'],
  ['Q6 text FILTER (regex on labels)', (r) => `SELECT ?product ?label WHERE {
  ?product a bsbm:Product ; rdfs:label ?label .
  FILTER regex(?label, "${['alpha', 'delta', 'smart', 'rapid', 'zulu'][pick(r, 5)]} ${pick(r, 9) + 1}")
} LIMIT 20`, 'application/sparql-results+json'],
  ['Q7 offers in a date window + OPTIONAL reviews', (r, sc) => {
    const p = `inst:Product${pick(r, sc.products)}`;
    return `SELECT ?label ?offer ?price ?vendor ?review ?title WHERE {
  ${p} rdfs:label ?label .
  OPTIONAL {
    ?offer bsbm:product ${p} ; bsbm:price ?price ; bsbm:vendor ?v ; bsbm:validTo ?date .
    ?v rdfs:label ?vendor .
    FILTER (?date > "2009-03-01T00:00:00Z"^^xsd:dateTime)
  }
  OPTIONAL { ?review bsbm:reviewFor ${p} ; dc:title ?title }
}`;
  }, 'application/sparql-results+json'],
  ['Q8 reviews by language, ORDER BY date DESC', (r, sc) => `SELECT ?title ?text ?date ?reviewer WHERE {
  ?review bsbm:reviewFor inst:Product${pick(r, sc.products)} ; dc:title ?title ; rev:text ?text ;
          bsbm:reviewDate ?date ; rev:reviewer ?reviewer .
  FILTER langMatches(lang(?text), "${['en', 'de', 'fr'][pick(r, 3)]}")
} ORDER BY DESC(?date) LIMIT 20`, 'application/sparql-results+json'],
  ['Q9 DESCRIBE a reviewer', (r, sc) => `DESCRIBE ?x WHERE { inst:Review${pick(r, sc.reviews)} rev:reviewer ?x }`, 'text/turtle'],
  ['Q10 cheap fast offers, ORDER BY price', (r, sc) => `SELECT DISTINCT ?offer ?price WHERE {
  ?offer bsbm:product inst:Product${pick(r, sc.products)} ; bsbm:vendor ?vendor ; bsbm:deliveryDays ?days ; bsbm:price ?price .
  FILTER (?days <= ${3 + pick(r, 10)})
} ORDER BY xsd:double(str(?price)) LIMIT 10`, 'application/sparql-results+json'],
  ['Q11 everything about an offer (UNION)', (r, sc) => {
    const o = `inst:Offer${pick(r, sc.offers)}`;
    return `SELECT ?property ?hasValue ?isValueOf WHERE { { ${o} ?property ?hasValue } UNION { ?isValueOf ?property ${o} } }`;
  }, 'application/sparql-results+json'],
  ['Q12 CONSTRUCT an offer export', (r, sc) => {
    const o = `inst:Offer${pick(r, sc.offers)}`;
    return `CONSTRUCT { ${o} bsbm:product ?p ; bsbm:price ?price ; bsbm:vendor ?v . ?v rdfs:label ?vl } WHERE {
  ${o} bsbm:product ?p ; bsbm:price ?price ; bsbm:vendor ?v . ?v rdfs:label ?vl }`;
  }, 'text/turtle'],
];

/** `rounds` of the mix (12 queries each), deterministic for a scale and seed. */
export function queryMix(products: number, rounds: number, seed = 7): MixQuery[] {
  const sc = scaleFor(products);
  const r = rng(seed);
  const out: MixQuery[] = [];
  for (let i = 0; i < rounds; i++) {
    for (const [name, tpl, accept] of TEMPLATES) out.push({ name, text: PREFIXES + tpl(r, sc), accept });
  }
  return out;
}

export const QUERY_NAMES = TEMPLATES.map(([n]) => n);
