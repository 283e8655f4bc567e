import { RouteCallPlaces } from './route-call-places';

describe('RouteCallPlaces', () => {
  it('starts first attempts while the route has places, the others as places free up', () => {
    const places = new RouteCallPlaces(2);
    const started: string[] = [];
    for (const name of ['a', 'b', 'c']) places.waitFor('route', () => started.push(name));
    expect(started).toEqual(['a', 'b']);
    places.release('route', true);
    expect(started).toEqual(['a', 'b', 'c']);
  });

  it('counts claimed calls in the places of their routes', () => {
    const places = new RouteCallPlaces(2);
    const started: string[] = [];
    places.take('route');
    places.take('route');
    places.waitFor('route', () => started.push('direct'));
    places.waitFor('other', () => started.push('other'));
    expect(started).toEqual(['other']);
    places.release('route', false);
    expect(started).toEqual(['other', 'direct']);
  });

  it('withdraws an attempt still waiting, never one started', () => {
    const places = new RouteCallPlaces(1);
    const started: string[] = [];
    const first = places.waitFor('route', () => started.push('first'));
    const second = places.waitFor('route', () => started.push('second'));
    expect(first()).toBe(false);
    expect(second()).toBe(true);
    places.release('route', true);
    expect(started).toEqual(['first']);
    expect(places.directCalls()).toEqual({ routeIds: [], counts: [] });
  });

  it('tells claims the first attempts in flight by route, not those waiting', () => {
    const places = new RouteCallPlaces(1);
    places.waitFor('route', () => undefined);
    places.waitFor('route', () => undefined);
    places.waitFor('other', () => undefined);
    expect(places.directCalls()).toEqual({ routeIds: ['route', 'other'], counts: [1, 1] });
  });
});
