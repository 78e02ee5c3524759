// Text the CLI prints comes from the library and from imported files (names, descriptions, SKILL.md
// bodies, paths): a control or bidi character there could move the cursor, retitle the window or
// reorder the line, and an invisible one (U+200B, U+00AD, U+FEFF, U+2028, a lone surrogate) hide a difference. Everything printed goes through forTerminal; tabs and newlines (our own layout)
// stay. The \uXXXX form keeps --json output valid JSON with the same values.
const UNSAFE = /(?![\t\n])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu; // \p{Cc}: C0, DEL, C1; \p{Cf}, separators, lone surrogates: invisible

export const forTerminal = (text: string): string =>
  text.replace(UNSAFE, (ch) =>
    // every UTF-16 unit: an astral format character (U+E0001) is two
    [...Array(ch.length).keys()].map((i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
  );
