// Valid examples of every payload type, for tests to start from and mutate.
export const UUID_A = '3f1e8d2a-6b7c-4d5e-9f10-112233445566';
export const UUID_B = '0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3';

export const POSITION = { x: 100.5, y: 64, z: -200.25, dimension: 'overworld' };
export const ITEM = { id: 'minecraft:diamond_sword', count: 1, damage: 3, maxDamage: 1561, enchantments: [{ id: 'minecraft:sharpness', level: 5 }], name: 'Excalibur' };

export function validPayloads(): Record<string, Record<string, unknown>> {
  return {
    chat: { type: 'chat', message: 'hello' },
    death: { type: 'death', player: { uuid: UUID_A, name: 'Steve' }, pops: 2, timestamp: 1763800000000, position: { ...POSITION } },
    entity_owner: { type: 'entity_owner', id: '1234', owner: { uuid: UUID_A, name: 'Steve' } },
    keepalive: { type: 'keepalive' },
    login: { type: 'login', player: { uuid: UUID_A, name: 'Steve' }, timestamp: 1763800000000 },
    logout: {
      type: 'logout',
      player: { uuid: UUID_A, name: 'Steve' },
      inventory: [{ slot: 0, item: { ...ITEM } }],
      pops: 0,
      timestamp: 1763800000000,
      position: { ...POSITION, phase: 'sneaking', pitch: 12.5, yaw: 270 },
    },
    message: { type: 'message', message: 'psst', to: UUID_B },
    minigame: { type: 'minigame', game: 'bedwars', gamedata: { team: 'red', beds: [true, false] } },
    ping: { type: 'ping', player: UUID_A, position: { ...POSITION }, color: '#ff8800', duration: 5 },
    presence: {
      type: 'presence',
      inventory: [{ slot: 0, item: { ...ITEM } }, { slot: 40, item: { id: 'minecraft:totem_of_undying', count: 1 } }],
      attributes: { absorption: 4, health: 18.5, hunger: 20, oxygen: 300, saturation: 5.2 },
    },
    resend_request: { type: 'resend_request', include: ['presence', 'logout'] },
  };
}
