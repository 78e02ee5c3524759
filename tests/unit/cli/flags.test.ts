// The CLI's flag parsers: one rule for numbers, one for integers, one message shape.
import { describe, expect, it } from 'vitest';
import { parseInteger, parseNumber } from '../../../main/cli/args';

describe('flag parsers', () => {
  it('parseNumber takes finite numbers and refuses blanks', () => {
    expect(parseNumber('0.25', '--beta')).toBe(0.25);
    expect(parseNumber('-1', '--weights')).toBe(-1);
    for (const bad of ['', ' ', 'x', 'Infinity', 'NaN'])
      expect(() => parseNumber(bad, '--beta')).toThrow(`--beta: "${bad}" is not a number`);
  });

  it('parseInteger takes plain digits within its bounds and says which bounds', () => {
    expect(parseInteger('7', '--n', { min: 1 })).toBe(7);
    expect(parseInteger('-3', '--rank')).toBe(-3);
    expect(parseInteger('0', '--port', { min: 0, max: 65535 })).toBe(0);
    expect(() => parseInteger('1.5', '--rank')).toThrow('--rank: "1.5" is not an integer');
    expect(() => parseInteger('1e3', '--n', { min: 1 })).toThrow('--n: "1e3" is not an integer ≥ 1');
    expect(() => parseInteger('0', '--max-tokens', { min: 1 })).toThrow('--max-tokens: "0" is not an integer ≥ 1');
    expect(() => parseInteger('70000', '--port', { min: 0, max: 65535 })).toThrow(
      '--port: "70000" is not an integer from 0 to 65535',
    );
    expect(() => parseInteger('-1', '--seed', { min: 0, expected: 'a whole number' })).toThrow(
      '--seed: "-1" is not a whole number',
    );
    expect(() => parseInteger('99999999999999999999', '--n')).toThrow('is not an integer');
  });
});
