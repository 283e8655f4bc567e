import type { AccountRecord } from '@envoi/contracts-accounts';

import type { AccountEntity } from './account.entity';

export function toAccountRecord(account: AccountEntity): AccountRecord {
  return {
    object: 'account',
    id: account.id,
    parent_account_id: account.parentAccountId,
    created_at: account.createdAt.toISOString(),
    updated_at: account.updatedAt.toISOString(),
    name: account.name,
    website: account.website,
    about: account.about,
    track_opens: account.trackOpens,
    track_clicks: account.trackClicks,
    reject_bad_recipients: account.rejectBadRecipients,
    reject_mistyped_recipients: account.rejectMistypedRecipients,
    message_metadata_retention: account.messageMetadataRetention,
    message_data_retention: account.messageDataRetention,
    owner_id: account.ownerId,
  };
}
