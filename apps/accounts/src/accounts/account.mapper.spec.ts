import { AccountEntity } from './account.entity';
import { toAccountRecord } from './account.mapper';

describe('toAccountRecord', () => {
  it('maps every public field and hides the keyset position', () => {
    const entity = Object.assign(new AccountEntity(), {
      id: '6a0b9a38-0000-4000-8000-000000000001',
      seq: '7',
      parentAccountId: null,
      createdAt: new Date('2026-01-02T03:04:05.678Z'),
      updatedAt: new Date('2026-01-02T03:04:05.678Z'),
      name: 'Acme',
      website: null,
      about: '',
      trackOpens: true,
      trackClicks: false,
      rejectBadRecipients: true,
      rejectMistypedRecipients: false,
      messageMetadataRetention: 30,
      messageDataRetention: 7,
      ownerId: '6a0b9a38-0000-4000-8000-0000000000ff',
    });

    expect(toAccountRecord(entity)).toEqual({
      object: 'account',
      id: '6a0b9a38-0000-4000-8000-000000000001',
      parent_account_id: null,
      created_at: '2026-01-02T03:04:05.678Z',
      updated_at: '2026-01-02T03:04:05.678Z',
      name: 'Acme',
      website: null,
      about: '',
      track_opens: true,
      track_clicks: false,
      reject_bad_recipients: true,
      reject_mistyped_recipients: false,
      message_metadata_retention: 30,
      message_data_retention: 7,
      owner_id: '6a0b9a38-0000-4000-8000-0000000000ff',
    });
  });
});
