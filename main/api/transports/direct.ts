// In-process link for the CLI: the dispatcher's validation and error envelope, no serialisation.
import { createClient, type Link } from '../../../common/api/client';
import type { ClientOf, Contract } from '../../../common/api/define';
import type { Dispatcher } from '../dispatcher';

export function directClient<C extends Contract>(contract: C, dispatcher: Dispatcher<C>): ClientOf<C> {
  const link: Link = {
    call: (method, input) => dispatcher.call(method, input),
    stream(method, input, onEvent) {
      const controller = new AbortController();
      return { result: dispatcher.stream(method, input, onEvent, controller.signal), cancel: () => controller.abort() };
    },
  };
  return createClient(contract, link);
}
