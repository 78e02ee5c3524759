// Hashes for content identity (sha256) and for duplicate detection (bodyHash).
import { createHash } from 'node:crypto';
import type { ParsedSkill } from '../../common/api/skill-schemas';

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * The same skill copied into several places differs in case, wrapping, list markers and emphasis,
 * so the body is NFKC-folded, lowercased, stripped of punctuation and symbols (markdown syntax
 * included) and its whitespace collapsed before hashing.
 */
export function normalizeBody(body: string): string {
  return body
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\p{P}\p{S}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export function bodyHash(skill: ParsedSkill | string): string {
  return sha256(normalizeBody(typeof skill === 'string' ? skill : skill.body));
}
