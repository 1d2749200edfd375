/**
 * The math expression language of the original (`pkg/expr/mathexp/parse`): a lexer and a
 * recursive-descent parser for its grammar, with its error texts.
 *
 *   O -> A {"||" A}       A -> C {"&&" C}      C -> P {("==" | "!=" | ">" | ">=" | "<" | "<=") P}
 *   P -> M {("+" | "-") M}  M -> E {("*" | "/" | "%") E}  E -> F {"**" F}
 *   F -> number | func(...) | $var | "(" O ")" | "!" F | "-" F
 *
 * Bounded: an expression longer than MAX_LENGTH or nested deeper than MAX_DEPTH is refused
 * before it can cost anything.
 */

export type Node =
  | { type: 'number'; value: number; text: string }
  | { type: 'var'; name: string; text: string }
  | { type: 'string'; value: string; text: string }
  | { type: 'unary'; op: '!' | '-'; arg: Node }
  | { type: 'binary'; op: string; left: Node; right: Node }
  | { type: 'func'; name: string; args: Node[] };

export interface ParsedExpression {
  root: Node;
  /** The refIds the expression reads, in order of appearance. */
  varNames: string[];
}

/** Ours: the original has no such limits. */
export const MAX_LENGTH = 10_000;
export const MAX_DEPTH = 100;

/** Number of arguments of each built-in (`mathexp/funcs.go`). */
export const FUNCTION_ARITY: Readonly<Record<string, number>> = {
  abs: 1, log: 1, nan: 0, is_nan: 1, inf: 0, infn: 0, is_inf: 1, null: 0, is_null: 1, is_number: 1, round: 1, ceil: 1, floor: 1,
};

type TokenType = 'number' | 'var' | 'func' | 'string' | 'op' | 'lparen' | 'rparen' | 'comma' | 'eof';

interface Token {
  type: TokenType;
  text: string;
}

export class MathParseError extends Error {}

/** A token as the original's errors print it (`item.String()`). */
function show(token: Token): string {
  if (token.type === 'eof') return 'EOF';
  return token.text.length > 10 ? `${JSON.stringify(token.text.slice(0, 10))}...` : JSON.stringify(token.text);
}

const OPERATORS = ['**', '==', '!=', '>=', '<=', '&&', '||', '+', '-', '*', '/', '%', '>', '<', '!'];

function lex(text: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  while (pos < text.length) {
    const char = text[pos];
    if (char === ' ' || char === '\t' || char === '\n' || char === '\r') {
      pos++;
      continue;
    }
    if (char === '(' || char === ')' || char === ',') {
      tokens.push({ type: char === '(' ? 'lparen' : char === ')' ? 'rparen' : 'comma', text: char });
      pos++;
      continue;
    }
    if (char === '$') {
      const braced = /^\$\{[^}]*\}/.exec(text.slice(pos));
      const plain = /^\$[A-Za-z0-9_.]+/.exec(text.slice(pos));
      const match = braced ?? plain;
      if (!match) throw new MathParseError(`expr: invalid variable: ${text.slice(pos, pos + 10)}`);
      tokens.push({ type: 'var', text: match[0] });
      pos += match[0].length;
      continue;
    }
    const number = /^(0[xX][0-9a-fA-F]+|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)/.exec(text.slice(pos));
    if (number) {
      tokens.push({ type: 'number', text: number[0] });
      pos += number[0].length;
      continue;
    }
    if (/[A-Za-z_]/.test(char)) {
      const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(pos))![0];
      tokens.push({ type: 'func', text: word });
      pos += word.length;
      continue;
    }
    if (char === '"') {
      const string = /^"(\\.|[^"\\])*"/.exec(text.slice(pos));
      if (!string) throw new MathParseError('expr: unterminated quoted string');
      tokens.push({ type: 'string', text: string[0] });
      pos += string[0].length;
      continue;
    }
    const op = OPERATORS.find((candidate) => text.startsWith(candidate, pos));
    if (!op) throw new MathParseError(`expr: invalid character: ${JSON.stringify(char)}`);
    tokens.push({ type: 'op', text: op });
    pos += op.length;
  }
  tokens.push({ type: 'eof', text: '' });
  return tokens;
}

const LEVELS: readonly (readonly string[])[] = [['||'], ['&&'], ['==', '!=', '>', '>=', '<', '<='], ['+', '-'], ['*', '/', '%'], ['**']];

export function parseMath(text: string): ParsedExpression {
  if (text.length > MAX_LENGTH) throw new MathParseError(`expr: expression longer than ${MAX_LENGTH} characters`);
  const tokens = lex(text);
  const varNames: string[] = [];
  let index = 0;
  let depth = 0;
  const peek = () => tokens[index];
  const next = () => tokens[index++];
  const unexpected = (token: Token, context: string): never => {
    throw new MathParseError(`expr: unexpected ${show(token)} in ${context}`);
  };
  const nest = () => {
    if (++depth > MAX_DEPTH) throw new MathParseError(`expr: expression nested deeper than ${MAX_DEPTH} levels`);
  };

  const binary = (level: number): Node => {
    if (level === LEVELS.length) return factor();
    let node = binary(level + 1);
    while (peek().type === 'op' && LEVELS[level].includes(peek().text)) {
      const op = next().text;
      node = { type: 'binary', op, left: node, right: binary(level + 1) };
    }
    return node;
  };

  const factor = (): Node => {
    const token = peek();
    nest();
    try {
      switch (token.type) {
        case 'number':
        case 'func':
        case 'var':
          return value();
        case 'op':
          if (token.text === '!' || token.text === '-') {
            next();
            return { type: 'unary', op: token.text, arg: factor() };
          }
          return unexpected(token, 'input: F()');
        case 'lparen': {
          next();
          const node = binary(0);
          const close = next();
          if (close.type !== 'rparen') unexpected(close, 'input: F()');
          return node;
        }
        default:
          return unexpected(token, 'input: F()');
      }
    } finally {
      depth--;
    }
  };

  const value = (): Node => {
    const token = next();
    if (token.type === 'number') {
      const parsed = Number(token.text);
      if (Number.isNaN(parsed)) throw new MathParseError(`expr: illegal number syntax: ${JSON.stringify(token.text)}`);
      return { type: 'number', value: parsed, text: token.text };
    }
    if (token.type === 'var') {
      const name = token.text.slice(1).replace(/^\{/, '').replace(/\}$/, '');
      varNames.push(name);
      return { type: 'var', name, text: token.text };
    }
    return func(token);
  };

  const func = (token: Token): Node => {
    const arity = FUNCTION_ARITY[token.text];
    if (arity === undefined) throw new MathParseError(`expr: non existent function ${token.text}`);
    const open = next();
    if (open.type !== 'lparen') unexpected(open, 'func');
    const args: Node[] = [];
    for (;;) {
      const current = peek();
      if (current.type === 'rparen') {
        next();
        break;
      }
      if (current.type === 'eof') unexpected(current, 'func');
      if (current.type === 'comma' && args.length > 0) {
        next();
        continue;
      }
      if (current.type === 'string') {
        next();
        args.push({ type: 'string', value: JSON.parse(current.text) as string, text: current.text });
        continue;
      }
      args.push(binary(0));
    }
    if (args.length < arity) throw new MathParseError(`expr: parse: not enough arguments for ${token.text}`);
    if (args.length > arity) throw new MathParseError(`expr: parse: too many arguments for ${token.text}`);
    return { type: 'func', name: token.text, args };
  };

  const root = binary(0);
  const end = next();
  if (end.type !== 'eof') unexpected(end, 'root input');
  return { root, varNames };
}

/**
 * A node as the original prints it in notices (`Node.String()`). A chain of binary operations is
 * printed down its left spine in a loop: only what the parser bounds (parentheses, unary
 * operators, function arguments) is printed by recursion.
 */
export function nodeText(node: Node): string {
  switch (node.type) {
    case 'number':
    case 'var':
    case 'string':
      return node.text;
    case 'unary':
      return `${node.op}${nodeText(node.arg)}`;
    case 'binary': {
      const spine: Array<Extract<Node, { type: 'binary' }>> = [node];
      let leftmost = node.left;
      while (leftmost.type === 'binary') {
        spine.push(leftmost);
        leftmost = leftmost.left;
      }
      let text = nodeText(leftmost);
      for (let i = spine.length - 1; i >= 0; i--) text = `${text} ${spine[i]!.op} ${nodeText(spine[i]!.right)}`;
      return text;
    }
    case 'func':
      return `${node.name}(${node.args.map(nodeText).join(', ')})`;
  }
}
