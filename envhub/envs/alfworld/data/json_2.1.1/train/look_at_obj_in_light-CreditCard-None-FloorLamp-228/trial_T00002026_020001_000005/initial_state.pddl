
(define (problem plan_trial_T00002026_020001_000005)
    (:domain alfred)
    (:objects
        agent1 - agent
        CreditCard_bar__minus_01_dot_20_bar__plus_01_dot_10_bar__minus_00_dot_18 - object
        Laptop_bar__minus_02_dot_27_bar__plus_00_dot_27_bar__plus_00_dot_74 - object
        Watch_bar__minus_01_dot_85_bar__plus_00_dot_34_bar__minus_01_dot_08 - object
        Plate_bar__minus_00_dot_00_bar__plus_01_dot_10_bar__plus_02_dot_69 - object
        Pillow_bar__plus_00_dot_27_bar__plus_00_dot_39_bar__plus_00_dot_08 - object
        Newspaper_bar__minus_01_dot_64_bar__plus_00_dot_60_bar__minus_00_dot_58 - object
        FloorLamp_bar__minus_00_dot_08_bar__plus_00_dot_22_bar__plus_02_dot_23 - object
        CreditCardType - otype
        FloorLampType - otype
        LaptopType - otype
        NewspaperType - otype
        PillowType - otype
        PlateType - otype
        WatchType - otype
        CoffeeTableType - rtype
        DiningTableType - rtype
        DrawerType - rtype
        GarbageCanType - rtype
        SideTableType - rtype
        SofaType - rtype
        CoffeeTable_bar__minus_04_dot_00_bar__plus_00_dot_01_bar__plus_02_dot_45 - receptacle
        DiningTable_bar__minus_01_dot_40_bar__plus_00_dot_00_bar__plus_01_dot_45 - receptacle
        Drawer_bar__minus_02_dot_56_bar__plus_00_dot_53_bar__plus_04_dot_48 - receptacle
        GarbageCan_bar__minus_00_dot_22_bar__minus_00_dot_01_bar__plus_04_dot_73 - receptacle
        SideTable_bar__minus_02_dot_56_bar__minus_00_dot_01_bar__plus_04_dot_74 - receptacle
        SideTable_bar__minus_03_dot_79_bar__minus_00_dot_01_bar__plus_04_dot_46 - receptacle
        Sofa_bar__minus_03_dot_66_bar__minus_00_dot_02_bar__plus_00_dot_46 - receptacle
        Sofa_bar__minus_05_dot_40_bar__minus_00_dot_02_bar__plus_02_dot_43 - receptacle
        loc_bar_0_bar_0_bar_0_bar_30 - location
        loc_bar__minus_10_bar_6_bar_1_bar_30 - location
        loc_bar__minus_11_bar_9_bar_3_bar_30 - location
        loc_bar__minus_12_bar_15_bar_0_bar_30 - location
        loc_bar__minus_13_bar_7_bar_2_bar_30 - location
        loc_bar__minus_18_bar_10_bar_3_bar_30 - location
        loc_bar__minus_19_bar_18_bar_1_bar_30 - location
        loc_bar__minus_5_bar_17_bar_1_bar_30 - location
        loc_bar__minus_6_bar_17_bar_3_bar_30 - location
        )
    (:init
        (atLocation agent1 loc_bar_0_bar_0_bar_0_bar_30)
        (receptacleType CoffeeTable_bar__minus_04_dot_00_bar__plus_00_dot_01_bar__plus_02_dot_45 CoffeeTableType)
        (receptacleAtLocation CoffeeTable_bar__minus_04_dot_00_bar__plus_00_dot_01_bar__plus_02_dot_45 loc_bar__minus_11_bar_9_bar_3_bar_30)
        (receptacleType DiningTable_bar__minus_01_dot_40_bar__plus_00_dot_00_bar__plus_01_dot_45 DiningTableType)
        (receptacleAtLocation DiningTable_bar__minus_01_dot_40_bar__plus_00_dot_00_bar__plus_01_dot_45 loc_bar__minus_10_bar_6_bar_1_bar_30)
        (receptacleType Drawer_bar__minus_02_dot_56_bar__plus_00_dot_53_bar__plus_04_dot_48 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_02_dot_56_bar__plus_00_dot_53_bar__plus_04_dot_48 loc_bar__minus_12_bar_15_bar_0_bar_30)
        (openable Drawer_bar__minus_02_dot_56_bar__plus_00_dot_53_bar__plus_04_dot_48)
        (receptacleType GarbageCan_bar__minus_00_dot_22_bar__minus_00_dot_01_bar__plus_04_dot_73 GarbageCanType)
        (receptacleAtLocation GarbageCan_bar__minus_00_dot_22_bar__minus_00_dot_01_bar__plus_04_dot_73 loc_bar__minus_5_bar_17_bar_1_bar_30)
        (receptacleType SideTable_bar__minus_02_dot_56_bar__minus_00_dot_01_bar__plus_04_dot_74 SideTableType)
        (receptacleAtLocation SideTable_bar__minus_02_dot_56_bar__minus_00_dot_01_bar__plus_04_dot_74 loc_bar__minus_6_bar_17_bar_3_bar_30)
        (receptacleType SideTable_bar__minus_03_dot_79_bar__minus_00_dot_01_bar__plus_04_dot_46 SideTableType)
        (receptacleAtLocation SideTable_bar__minus_03_dot_79_bar__minus_00_dot_01_bar__plus_04_dot_46 loc_bar__minus_19_bar_18_bar_1_bar_30)
        (receptacleType Sofa_bar__minus_03_dot_66_bar__minus_00_dot_02_bar__plus_00_dot_46 SofaType)
        (receptacleAtLocation Sofa_bar__minus_03_dot_66_bar__minus_00_dot_02_bar__plus_00_dot_46 loc_bar__minus_13_bar_7_bar_2_bar_30)
        (receptacleType Sofa_bar__minus_05_dot_40_bar__minus_00_dot_02_bar__plus_02_dot_43 SofaType)
        (receptacleAtLocation Sofa_bar__minus_05_dot_40_bar__minus_00_dot_02_bar__plus_02_dot_43 loc_bar__minus_18_bar_10_bar_3_bar_30)
        (canContain CoffeeTableType CreditCardType)
        (canContain CoffeeTableType LaptopType)
        (canContain CoffeeTableType NewspaperType)
        (canContain CoffeeTableType PlateType)
        (canContain CoffeeTableType WatchType)
        (canContain DiningTableType CreditCardType)
        (canContain DiningTableType LaptopType)
        (canContain DiningTableType NewspaperType)
        (canContain DiningTableType PlateType)
        (canContain DiningTableType WatchType)
        (canContain DrawerType CreditCardType)
        (canContain DrawerType NewspaperType)
        (canContain DrawerType WatchType)
        (canContain GarbageCanType NewspaperType)
        (canContain SideTableType CreditCardType)
        (canContain SideTableType LaptopType)
        (canContain SideTableType NewspaperType)
        (canContain SideTableType PlateType)
        (canContain SideTableType WatchType)
        (canContain SofaType CreditCardType)
        (canContain SofaType LaptopType)
        (canContain SofaType NewspaperType)
        (canContain SofaType PillowType)
        (objectType CreditCard_bar__minus_01_dot_20_bar__plus_01_dot_10_bar__minus_00_dot_18 CreditCardType)
        (inReceptacle CreditCard_bar__minus_01_dot_20_bar__plus_01_dot_10_bar__minus_00_dot_18 DiningTable_bar__minus_01_dot_40_bar__plus_00_dot_00_bar__plus_01_dot_45)
        (objectAtLocation CreditCard_bar__minus_01_dot_20_bar__plus_01_dot_10_bar__minus_00_dot_18 loc_bar__minus_10_bar_6_bar_1_bar_30)
        (pickupable CreditCard_bar__minus_01_dot_20_bar__plus_01_dot_10_bar__minus_00_dot_18)
        (objectType Laptop_bar__minus_02_dot_27_bar__plus_00_dot_27_bar__plus_00_dot_74 LaptopType)
        (inReceptacle Laptop_bar__minus_02_dot_27_bar__plus_00_dot_27_bar__plus_00_dot_74 SideTable_bar__minus_02_dot_56_bar__minus_00_dot_01_bar__plus_04_dot_74)
        (objectAtLocation Laptop_bar__minus_02_dot_27_bar__plus_00_dot_27_bar__plus_00_dot_74 loc_bar__minus_6_bar_17_bar_3_bar_30)
        (pickupable Laptop_bar__minus_02_dot_27_bar__plus_00_dot_27_bar__plus_00_dot_74)
        (objectType Watch_bar__minus_01_dot_85_bar__plus_00_dot_34_bar__minus_01_dot_08 WatchType)
        (inReceptacle Watch_bar__minus_01_dot_85_bar__plus_00_dot_34_bar__minus_01_dot_08 DiningTable_bar__minus_01_dot_40_bar__plus_00_dot_00_bar__plus_01_dot_45)
        (objectAtLocation Watch_bar__minus_01_dot_85_bar__plus_00_dot_34_bar__minus_01_dot_08 loc_bar__minus_10_bar_6_bar_1_bar_30)
        (pickupable Watch_bar__minus_01_dot_85_bar__plus_00_dot_34_bar__minus_01_dot_08)
        (objectType Plate_bar__minus_00_dot_00_bar__plus_01_dot_10_bar__plus_02_dot_69 PlateType)
        (inReceptacle Plate_bar__minus_00_dot_00_bar__plus_01_dot_10_bar__plus_02_dot_69 SideTable_bar__minus_03_dot_79_bar__minus_00_dot_01_bar__plus_04_dot_46)
        (objectAtLocation Plate_bar__minus_00_dot_00_bar__plus_01_dot_10_bar__plus_02_dot_69 loc_bar__minus_19_bar_18_bar_1_bar_30)
        (pickupable Plate_bar__minus_00_dot_00_bar__plus_01_dot_10_bar__plus_02_dot_69)
        (isReceptacleObject Plate_bar__minus_00_dot_00_bar__plus_01_dot_10_bar__plus_02_dot_69)
        (cleanable Plate_bar__minus_00_dot_00_bar__plus_01_dot_10_bar__plus_02_dot_69)
        (heatable Plate_bar__minus_00_dot_00_bar__plus_01_dot_10_bar__plus_02_dot_69)
        (coolable Plate_bar__minus_00_dot_00_bar__plus_01_dot_10_bar__plus_02_dot_69)
        (objectType Pillow_bar__plus_00_dot_27_bar__plus_00_dot_39_bar__plus_00_dot_08 PillowType)
        (inReceptacle Pillow_bar__plus_00_dot_27_bar__plus_00_dot_39_bar__plus_00_dot_08 Sofa_bar__minus_05_dot_40_bar__minus_00_dot_02_bar__plus_02_dot_43)
        (objectAtLocation Pillow_bar__plus_00_dot_27_bar__plus_00_dot_39_bar__plus_00_dot_08 loc_bar__minus_18_bar_10_bar_3_bar_30)
        (pickupable Pillow_bar__plus_00_dot_27_bar__plus_00_dot_39_bar__plus_00_dot_08)
        (objectType Newspaper_bar__minus_01_dot_64_bar__plus_00_dot_60_bar__minus_00_dot_58 NewspaperType)
        (inReceptacle Newspaper_bar__minus_01_dot_64_bar__plus_00_dot_60_bar__minus_00_dot_58 GarbageCan_bar__minus_00_dot_22_bar__minus_00_dot_01_bar__plus_04_dot_73)
        (objectAtLocation Newspaper_bar__minus_01_dot_64_bar__plus_00_dot_60_bar__minus_00_dot_58 loc_bar__minus_5_bar_17_bar_1_bar_30)
        (pickupable Newspaper_bar__minus_01_dot_64_bar__plus_00_dot_60_bar__minus_00_dot_58)
        (objectType FloorLamp_bar__minus_00_dot_08_bar__plus_00_dot_22_bar__plus_02_dot_23 FloorLampType)
        (inReceptacle FloorLamp_bar__minus_00_dot_08_bar__plus_00_dot_22_bar__plus_02_dot_23 SideTable_bar__minus_03_dot_79_bar__minus_00_dot_01_bar__plus_04_dot_46)
        (objectAtLocation FloorLamp_bar__minus_00_dot_08_bar__plus_00_dot_22_bar__plus_02_dot_23 loc_bar__minus_19_bar_18_bar_1_bar_30)
        (toggleable FloorLamp_bar__minus_00_dot_08_bar__plus_00_dot_22_bar__plus_02_dot_23)
        )

        (:goal
             (and
                 (exists (?ot - object
                          ?r - receptacle
                          ?a - agent
                          ?l - location)
                     (and
                         (objectType ?ot FloorLampType)
                         (toggleable ?ot)
                         (isToggled ?ot)
                         (receptacleAtLocation ?r ?l)
                         (atLocation ?a ?l)
                         (inReceptacle ?ot ?r)
                     )
                 )
                 (exists (?o - object
                          ?a - agent)
                     (and
                         (objectType ?o CreditCardType)
                         (holds ?a ?o)
                     )
                 )
             )
        )
    )
    
