
(define (problem plan_trial_T00002026_010000_000000)
    (:domain alfred)
    (:objects
        agent1 - agent
        CreditCard_bar__plus_00_dot_48_bar__plus_01_dot_68_bar__plus_00_dot_73 - object
        CD_bar__minus_02_dot_14_bar__plus_00_dot_62_bar__minus_01_dot_84 - object
        Pencil_bar__minus_00_dot_66_bar__plus_01_dot_50_bar__plus_02_dot_04 - object
        Book_bar__plus_01_dot_41_bar__plus_00_dot_85_bar__minus_02_dot_38 - object
        Pen_bar__minus_00_dot_10_bar__plus_01_dot_76_bar__plus_01_dot_50 - object
        Box_bar__plus_00_dot_40_bar__plus_01_dot_21_bar__minus_02_dot_66 - object
        BookType - otype
        BoxType - otype
        CDType - otype
        CreditCardType - otype
        PenType - otype
        PencilType - otype
        BedType - rtype
        DeskType - rtype
        DrawerType - rtype
        DresserType - rtype
        Bed_bar__plus_00_dot_01_bar__minus_00_dot_06_bar__plus_01_dot_61 - receptacle
        Desk_bar__minus_00_dot_38_bar__plus_00_dot_00_bar__minus_00_dot_95 - receptacle
        Drawer_bar__plus_02_dot_16_bar__plus_00_dot_21_bar__minus_00_dot_48 - receptacle
        Drawer_bar__plus_02_dot_16_bar__plus_00_dot_57_bar__minus_00_dot_48 - receptacle
        Drawer_bar__minus_00_dot_10_bar__plus_00_dot_22_bar__minus_00_dot_40 - receptacle
        Drawer_bar__minus_00_dot_10_bar__plus_00_dot_51_bar__minus_00_dot_40 - receptacle
        Drawer_bar__minus_00_dot_10_bar__plus_00_dot_76_bar__minus_00_dot_40 - receptacle
        Dresser_bar__plus_02_dot_16_bar__plus_00_dot_57_bar__minus_00_dot_48 - receptacle
        loc_bar_0_bar_0_bar_0_bar_30 - location
        loc_bar_2_bar__minus_5_bar_0_bar_30 - location
        loc_bar_2_bar__minus_5_bar_3_bar_30 - location
        loc_bar_3_bar__minus_2_bar_3_bar_30 - location
        loc_bar_3_bar__minus_5_bar_0_bar_30 - location
        loc_bar_5_bar__minus_5_bar_0_bar_30 - location
        loc_bar_6_bar_6_bar_3_bar_30 - location
        loc_bar_6_bar__minus_2_bar_1_bar_30 - location
        loc_bar_6_bar__minus_5_bar_0_bar_30 - location
        )
    (:init
        (atLocation agent1 loc_bar_0_bar_0_bar_0_bar_30)
        (receptacleType Bed_bar__plus_00_dot_01_bar__minus_00_dot_06_bar__plus_01_dot_61 BedType)
        (receptacleAtLocation Bed_bar__plus_00_dot_01_bar__minus_00_dot_06_bar__plus_01_dot_61 loc_bar_6_bar_6_bar_3_bar_30)
        (receptacleType Desk_bar__minus_00_dot_38_bar__plus_00_dot_00_bar__minus_00_dot_95 DeskType)
        (receptacleAtLocation Desk_bar__minus_00_dot_38_bar__plus_00_dot_00_bar__minus_00_dot_95 loc_bar_2_bar__minus_5_bar_3_bar_30)
        (receptacleType Drawer_bar__plus_02_dot_16_bar__plus_00_dot_21_bar__minus_00_dot_48 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_02_dot_16_bar__plus_00_dot_21_bar__minus_00_dot_48 loc_bar_5_bar__minus_5_bar_0_bar_30)
        (openable Drawer_bar__plus_02_dot_16_bar__plus_00_dot_21_bar__minus_00_dot_48)
        (receptacleType Drawer_bar__plus_02_dot_16_bar__plus_00_dot_57_bar__minus_00_dot_48 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_02_dot_16_bar__plus_00_dot_57_bar__minus_00_dot_48 loc_bar_6_bar__minus_5_bar_0_bar_30)
        (openable Drawer_bar__plus_02_dot_16_bar__plus_00_dot_57_bar__minus_00_dot_48)
        (receptacleType Drawer_bar__minus_00_dot_10_bar__plus_00_dot_22_bar__minus_00_dot_40 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_00_dot_10_bar__plus_00_dot_22_bar__minus_00_dot_40 loc_bar_3_bar__minus_5_bar_0_bar_30)
        (openable Drawer_bar__minus_00_dot_10_bar__plus_00_dot_22_bar__minus_00_dot_40)
        (receptacleType Drawer_bar__minus_00_dot_10_bar__plus_00_dot_51_bar__minus_00_dot_40 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_00_dot_10_bar__plus_00_dot_51_bar__minus_00_dot_40 loc_bar_2_bar__minus_5_bar_0_bar_30)
        (openable Drawer_bar__minus_00_dot_10_bar__plus_00_dot_51_bar__minus_00_dot_40)
        (receptacleType Drawer_bar__minus_00_dot_10_bar__plus_00_dot_76_bar__minus_00_dot_40 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_00_dot_10_bar__plus_00_dot_76_bar__minus_00_dot_40 loc_bar_3_bar__minus_2_bar_3_bar_30)
        (openable Drawer_bar__minus_00_dot_10_bar__plus_00_dot_76_bar__minus_00_dot_40)
        (receptacleType Dresser_bar__plus_02_dot_16_bar__plus_00_dot_57_bar__minus_00_dot_48 DresserType)
        (receptacleAtLocation Dresser_bar__plus_02_dot_16_bar__plus_00_dot_57_bar__minus_00_dot_48 loc_bar_6_bar__minus_2_bar_1_bar_30)
        (canContain BedType BookType)
        (canContain DeskType BookType)
        (canContain DeskType BoxType)
        (canContain DeskType CDType)
        (canContain DeskType CreditCardType)
        (canContain DeskType PenType)
        (canContain DeskType PencilType)
        (canContain DrawerType BookType)
        (canContain DrawerType CDType)
        (canContain DrawerType CreditCardType)
        (canContain DrawerType PenType)
        (canContain DrawerType PencilType)
        (canContain DresserType BookType)
        (canContain DresserType BoxType)
        (canContain DresserType CDType)
        (canContain DresserType CreditCardType)
        (canContain DresserType PenType)
        (canContain DresserType PencilType)
        (objectType CreditCard_bar__plus_00_dot_48_bar__plus_01_dot_68_bar__plus_00_dot_73 CreditCardType)
        (inReceptacle CreditCard_bar__plus_00_dot_48_bar__plus_01_dot_68_bar__plus_00_dot_73 Drawer_bar__minus_00_dot_10_bar__plus_00_dot_22_bar__minus_00_dot_40)
        (objectAtLocation CreditCard_bar__plus_00_dot_48_bar__plus_01_dot_68_bar__plus_00_dot_73 loc_bar_3_bar__minus_5_bar_0_bar_30)
        (pickupable CreditCard_bar__plus_00_dot_48_bar__plus_01_dot_68_bar__plus_00_dot_73)
        (objectType CD_bar__minus_02_dot_14_bar__plus_00_dot_62_bar__minus_01_dot_84 CDType)
        (inReceptacle CD_bar__minus_02_dot_14_bar__plus_00_dot_62_bar__minus_01_dot_84 Drawer_bar__plus_02_dot_16_bar__plus_00_dot_21_bar__minus_00_dot_48)
        (objectAtLocation CD_bar__minus_02_dot_14_bar__plus_00_dot_62_bar__minus_01_dot_84 loc_bar_5_bar__minus_5_bar_0_bar_30)
        (pickupable CD_bar__minus_02_dot_14_bar__plus_00_dot_62_bar__minus_01_dot_84)
        (objectType Pencil_bar__minus_00_dot_66_bar__plus_01_dot_50_bar__plus_02_dot_04 PencilType)
        (inReceptacle Pencil_bar__minus_00_dot_66_bar__plus_01_dot_50_bar__plus_02_dot_04 Desk_bar__minus_00_dot_38_bar__plus_00_dot_00_bar__minus_00_dot_95)
        (objectAtLocation Pencil_bar__minus_00_dot_66_bar__plus_01_dot_50_bar__plus_02_dot_04 loc_bar_2_bar__minus_5_bar_3_bar_30)
        (pickupable Pencil_bar__minus_00_dot_66_bar__plus_01_dot_50_bar__plus_02_dot_04)
        (objectType Book_bar__plus_01_dot_41_bar__plus_00_dot_85_bar__minus_02_dot_38 BookType)
        (inReceptacle Book_bar__plus_01_dot_41_bar__plus_00_dot_85_bar__minus_02_dot_38 Drawer_bar__minus_00_dot_10_bar__plus_00_dot_22_bar__minus_00_dot_40)
        (objectAtLocation Book_bar__plus_01_dot_41_bar__plus_00_dot_85_bar__minus_02_dot_38 loc_bar_3_bar__minus_5_bar_0_bar_30)
        (pickupable Book_bar__plus_01_dot_41_bar__plus_00_dot_85_bar__minus_02_dot_38)
        (objectType Pen_bar__minus_00_dot_10_bar__plus_01_dot_76_bar__plus_01_dot_50 PenType)
        (inReceptacle Pen_bar__minus_00_dot_10_bar__plus_01_dot_76_bar__plus_01_dot_50 Drawer_bar__plus_02_dot_16_bar__plus_00_dot_21_bar__minus_00_dot_48)
        (objectAtLocation Pen_bar__minus_00_dot_10_bar__plus_01_dot_76_bar__plus_01_dot_50 loc_bar_5_bar__minus_5_bar_0_bar_30)
        (pickupable Pen_bar__minus_00_dot_10_bar__plus_01_dot_76_bar__plus_01_dot_50)
        (objectType Box_bar__plus_00_dot_40_bar__plus_01_dot_21_bar__minus_02_dot_66 BoxType)
        (inReceptacle Box_bar__plus_00_dot_40_bar__plus_01_dot_21_bar__minus_02_dot_66 Desk_bar__minus_00_dot_38_bar__plus_00_dot_00_bar__minus_00_dot_95)
        (objectAtLocation Box_bar__plus_00_dot_40_bar__plus_01_dot_21_bar__minus_02_dot_66 loc_bar_2_bar__minus_5_bar_3_bar_30)
        (pickupable Box_bar__plus_00_dot_40_bar__plus_01_dot_21_bar__minus_02_dot_66)
        (isReceptacleObject Box_bar__plus_00_dot_40_bar__plus_01_dot_21_bar__minus_02_dot_66)
        )

        (:goal
            (and
                (exists (?r - receptacle)
                    (exists (?o - object)
                        (and
                            (inReceptacle ?o ?r)
                            (objectType ?o CreditCardType)
                            (receptacleType ?r DresserType)
                        )
                    )
                )
            )
        )
    )
    
