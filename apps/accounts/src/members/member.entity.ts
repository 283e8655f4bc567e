import type { MemberRole } from '@envoi/contracts-accounts';
import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  UpdateDateColumn,
} from 'typeorm';

import { AccountEntity } from '../accounts/account.entity';
import { UserEntity } from '../users/user.entity';

/** A user's membership of an account, with a role. One per (account, user). */
@Entity({ name: 'members' })
export class MemberEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'members_pkey' })
  accountId!: string;

  @Index('members_user_id_idx')
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'members_pkey' })
  userId!: string;

  @ManyToOne(() => AccountEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'members_account_id_fkey' })
  account?: AccountEntity;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'members_user_id_fkey' })
  user?: UserEntity;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt!: Date;

  @Column({ type: 'varchar', length: 32 })
  role!: MemberRole;
}
