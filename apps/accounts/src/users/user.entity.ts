import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** A person who can be a member of accounts. */
@Entity({ name: 'users' })
export class UserEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'users_pkey' })
  id!: string;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt!: Date;

  /**
   * Lowercased and trimmed; unique. Null for an owner created without an address (an account
   * provisioned by an operator or a parent account): such a user cannot be found by email.
   */
  @Index('users_email_key', { unique: true })
  @Column({ type: 'varchar', length: 254, nullable: true })
  email!: string | null;

  @Column({ type: 'varchar', length: 255, default: '' })
  name!: string;
}
