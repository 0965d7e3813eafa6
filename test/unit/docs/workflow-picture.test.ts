import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { examplePicture, PICTURE_FILE } from '../../../scripts/workflow-picture.js';

describe('the workflow picture of docs/operating.md', () => {
  it('is what the agent draws for the spec example today (npm run workflow:picture redraws it)', async () => {
    const drawn = await examplePicture();
    expect(drawn).toContain('>Complex Analysis Tool</text>');
    expect(readFileSync(PICTURE_FILE, 'utf8')).toBe(drawn);
  });
});
