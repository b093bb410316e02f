// Which logs a gateway hears and where it reads each (delivery/heard-logs.ts): the one log without
// regions; with regions, every region's log, its own read from itself and every other from the
// copy kept in the gateway's region, each heard on its own live subjects.
import { describe, expect, it } from 'vitest';
import { HeardLogs } from '../../services/gateway/delivery/heard-logs.js';
import { channelSubject } from '../../services/core/subjects.js';

const token = channelSubject('play.example.net').slice('channel.'.length);

describe('the logs a gateway hears', () => {
  it('without regions: the one log, on the live subjects of a mesh without regions', () => {
    const logs = HeardLogs.of(null);
    expect(logs.regional).toBe(false);
    // Read from its leader only: a replica of the one log is never read in its place.
    expect(logs.all()).toEqual([{ region: '', stream: 'RELAY', copy: false, origin: 'RELAY', prefix: '', subjects: 'channel.>', local: false }]);
    expect(logs.liveSubject('play.example.net')).toBe(`live.channel.${token}`);
    expect(logs.liveSubject(null)).toBe('live.channel.>');
    expect(logs.logOf(`channel.${token}`)).toBe(logs.all()[0]);
  });

  it('with regions: its own region’s log, a copy of every other region’s, each region heard live, and no region the mesh does not have', () => {
    const logs = HeardLogs.of({ here: 'us', all: ['eu', 'us', 'ap'], home: 'eu' });
    expect(logs.order).toEqual(['eu', 'us', 'ap']);
    expect(logs.all().map((l) => l.stream)).toEqual(['RELAY_REGION_EU_AT_US', 'RELAY_REGION_US', 'RELAY_REGION_AP_AT_US']);
    // Each read in the region, from a replica when leader gets are refused (a region cut off).
    expect(logs.all().map((l) => l.local)).toEqual([true, true, true]);
    expect(logs.liveSubject('play.example.net')).toBe(`live.region.*.channel.${token}`);
    expect(logs.liveSubject(null)).toBe('live.region.*.channel.>');
    const ap = logs.logOf(`region.ap.channel.${token}`);
    expect(ap?.region).toBe('ap');
    expect(logs.filter(ap!, 'play.example.net')).toBe(`region.ap.channel.${token}`);
    expect(logs.oneLogSubject(ap!, `region.ap.channel.${token}`)).toBe(`channel.${token}`);
    expect(logs.logOf(`region.elsewhere.channel.${token}`)).toBeNull();
    expect(logs.logOf(`channel.${token}`)).toBeNull();
  });

  it('refuses to be made for a region mesh without this gateway’s region', () => {
    expect(() => HeardLogs.of({ here: null, all: ['eu', 'us', 'ap'], home: 'eu' })).toThrow(/REGION/);
  });
});
