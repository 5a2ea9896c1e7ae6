// Components shared by the component specs: a search box in the usual style (zod, valtio), a
// store with every permission, and a valibot-typed cart.
import { proxy } from 'valtio/vanilla';
import * as v from 'valibot';
import { z } from 'zod';
import { Permission, type SecurityConfig, StatefulComponent, StateType } from '../../lib/index.js';

export class SearchComponent extends StatefulComponent {
  readonly box = proxy({ search_pattern: '' });
  readonly results = { search_result: '' };
  publicStates = {
    search_box_state: {
      type: StateType.public,
      permission: Permission.rw,
      schema: z.object({ search_pattern: z.string().max(300) }),
      sideEffectsDesc: 'Changes trigger a search and refresh the results',
      state: this.box,
    },
  };
  privateStates = {
    search_index: { type: StateType.private, state: { secret_token: 'tok-123' } },
  };
  protected override getScriptUtilities(): Record<string, (...args: never[]) => unknown> {
    return { normalizeSearch: (text: string) => text.trim().toLowerCase() };
  }
}

export const profileSchema = z.object({
  name: z.string().min(1),
  tags: z.array(z.string()).max(5),
  address: z.object({ city: z.string(), zip: z.string().regex(/^\d{5}$/) }),
});

export const configSchema = z.object({
  limit: z.number().int().min(1),
  items: z.array(z.object({ id: z.number(), label: z.string() })),
  nested: z.object({ deep: z.object({ value: z.number() }) }),
});

export const auditSchema = z.object({
  note: z.string().max(20).optional(),
  level: z.enum(['info', 'warn']).optional(),
  secret: z.string(),
});

/** One state per permission. */
export class Store extends StatefulComponent {
  readonly profile = proxy({ name: 'Ada', tags: ['math'], address: { city: 'London', zip: '12345' } });
  readonly config = proxy({ limit: 10, items: [{ id: 1, label: 'one' }], nested: { deep: { value: 1 } } });
  readonly audit = proxy<{ note?: string; level?: 'info' | 'warn'; secret: string }>({ secret: 'hunter2' });
  securityConfig: SecurityConfig = {};
  publicStates = {
    profile: { type: StateType.public, permission: Permission.rw, schema: profileSchema, state: this.profile },
    config: { type: StateType.public, permission: Permission.r, schema: configSchema, state: this.config },
    audit: {
      type: StateType.public,
      permission: Permission.w,
      schema: auditSchema,
      sideEffectsDesc: 'Each write is sent to the audit log',
      state: this.audit,
    },
  };
}

export const cartSchema = v.object({
  items: v.array(v.object({ sku: v.string(), qty: v.pipe(v.number(), v.integer(), v.minValue(1)) })),
  coupon: v.optional(v.string()),
});

export class Cart extends StatefulComponent {
  readonly cart = proxy<v.InferOutput<typeof cartSchema>>({ items: [] });
  publicStates = {
    cart_state: {
      type: StateType.public,
      permission: Permission.rw,
      schema: cartSchema,
      sideEffectsDesc: 'Recomputes the total',
      state: this.cart,
    },
  };
  protected override getScriptUtilities() {
    return {
      priceOf: {
        fn: async (sku: string) => (sku === 'tea' ? 4 : 2),
        description: 'unit price in euros',
        signature: '(sku: string): Promise<number>',
      },
    };
  }
}

/** Resolves after valtio has delivered its batched notifications. */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 10));
