// Chat prompts: the bundle's jinja chat_template rendered by @huggingface/jinja with the variables
// transformers' apply_chat_template passes (messages, add_generation_prompt, bos/eos/pad tokens).
import { Template } from '@huggingface/jinja';
import { invalid } from './errors';

export interface ChatMessage {
  readonly role: string;
  readonly content: string;
}

export interface SpecialTokenTexts {
  readonly bos_token?: string;
  readonly eos_token?: string;
  readonly pad_token?: string;
}

export class ChatTemplate {
  private readonly template: Template;

  constructor(
    readonly source: string,
    private readonly tokens: SpecialTokenTexts,
    private readonly where = 'chat_template',
  ) {
    try {
      this.template = new Template(source);
    } catch (err) {
      throw invalid(`${where}: the jinja template does not parse: ${(err as Error).message}`);
    }
  }

  render(messages: readonly ChatMessage[], { addGenerationPrompt = true } = {}): string {
    try {
      return this.template.render({ messages, add_generation_prompt: addGenerationPrompt, ...this.tokens });
    } catch (err) {
      throw invalid(`${this.where}: rendering failed: ${(err as Error).message}`);
    }
  }
}
