// Text the CLI prints comes from the library and from imported files (names, descriptions, SKILL.md
// bodies, paths): a control or bidi character there could move the cursor, retitle the window or
// reorder the line. Everything printed goes through forTerminal; tabs and newlines (our own layout)
// stay. The \uXXXX form keeps --json output valid JSON with the same values.
const UNSAFE = /(?![\t\n])[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu; // \p{Cc}: C0, DEL, C1

export const forTerminal = (text: string): string =>
  text.replace(UNSAFE, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
